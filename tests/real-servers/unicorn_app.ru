# SPDX-License-Identifier: MIT
# A Rack app for tests/real-servers/unicorn.sh: the seed's nightly-report
# pattern through the Ruby binding (swerve_claim.rb), its block form; and
# /hold and /take, a leader that lets go once its worker is drained (lib.sh's
# drain_check).
require "swerve_claim"

# unicorn tells a worker to stop over a pipe its main loop reads between
# requests (then closes its listeners): a worker busy in a request hears
# nothing.  So the leader is a thread of the worker, as a long-lived holder
# in unicorn would be, and it says when it let go in the file
# $SCL_DRAIN_OUT.  The worker's exit waits a little for it.
def start_leader
  $leader ||= Thread.new do
    leader = SwerveClaim.claim("leader").acquire(5.0)
    12_000.times do # 60 s at most
      break unless leader

      if SwerveClaim.draining?
        seen = Process.clock_gettime(Process::CLOCK_REALTIME, :nanosecond)
        leader.release
        File.write(ENV.fetch("SCL_DRAIN_OUT"), "drained #{Process.pid} #{seen}\n")
        break
      end
      sleep 0.005
    end
  end
  at_exit { $leader.join(2) }
end

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
         when "/hold"
           start_leader
           "started #{Process.pid}\n"
         when "/take"
           SwerveClaim.claim("leader", 5.0) { |held| held ? "took #{Process.pid}\n" : "busy #{Process.pid}\n" }
         when "/status"
           SwerveClaim.claim("nightly-report") { |held| held ? "free" : "held" }
         else
           "#{Process.pid}\n"
         end
  [200, { "content-type" => "text/plain" }, [body]]
end)
