# SPDX-License-Identifier: MIT
# A Rack app for tests/real-servers/puma.sh: the seed's nightly-report
# pattern through the Ruby binding (swerve_claim.rb), its block form; and
# /hold and /take, a leader that lets go once its worker is drained (lib.sh's
# drain_check); /draining, the worker and what draining() says in it.
require "swerve_claim"

def now_ns
  Process.clock_gettime(Process::CLOCK_REALTIME, :nanosecond)
end

# Puma runs each request in a thread of its worker's pool, and its master
# tells a worker to stop with SIGTERM, whose trap stops the server
# gracefully: the requests in progress are let finish (for up to
# worker_shutdown_timeout).  So the leader is a request that asks
# draining() every 5 ms; it notes when the worker's own TERM trap ran
# (chained, not taken), for drain_check: Ruby runs a trap in the main
# thread, which may come a few milliseconds after draining() said 1.
def hold
  told = nil
  previous = Signal.trap("TERM") do
    told ||= now_ns
    previous.call if previous.respond_to?(:call)
  end
  SwerveClaim.claim("leader", 5.0) do |leader|
    return "busy #{Process.pid}\n" unless leader

    12_000.times do # 60 s at most
      if SwerveClaim.draining?
        seen = now_ns
        leader.release
        # The shim knew when the master sent the signal; the trap runs
        # once the main thread gets to it, often after: wait for it.
        100.times { break if told; sleep 0.005 }
        return "drained #{Process.pid} #{seen} #{told}\n"
      end
      sleep 0.005
    end
    "busy #{Process.pid}\n"
  end
ensure
  Signal.trap("TERM", previous) if previous
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
           hold
         when "/take"
           SwerveClaim.claim("leader", 5.0) { |held| held ? "took #{Process.pid}\n" : "busy #{Process.pid}\n" }
         when "/draining"
           "#{Process.pid} #{SwerveClaim.draining? ? 1 : 0}"
         when "/status"
           SwerveClaim.claim("nightly-report") { |held| held ? "free" : "held" }
         else
           "#{Process.pid}\n"
         end
  [200, { "content-type" => "text/plain" }, [body]]
end)
