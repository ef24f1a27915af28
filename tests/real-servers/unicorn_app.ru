# A Rack app for tests/real-servers/unicorn.sh: the seed's nightly-report
# pattern through the Ruby binding (swerve_claim.rb), its block form.
require "swerve_claim"

run(lambda do |env|
  body = case env["PATH_INFO"]
         when "/report" # ?seconds=N: how long the report takes (1.5)
           seconds = Float(env["QUERY_STRING"].to_s[/seconds=([\d.]+)/, 1] || 1.5)
           SwerveClaim.claim("nightly-report") do |held| # released as the block ends
             if held
               sleep seconds # the report, while holding the claim
               "worker #{Process.pid} runs the report\n"
             else
               "worker #{Process.pid}: someone else is on it\n"
             end
           end
         when "/status"
           SwerveClaim.claim("nightly-report") { |held| held ? "free" : "held" }
         else
           "#{Process.pid}\n"
         end
  [200, { "content-type" => "text/plain" }, [body]]
end)
