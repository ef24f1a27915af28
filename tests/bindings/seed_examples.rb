# SPDX-License-Identifier: MIT
# frozen_string_literal: true

# The Swerve claim pages' examples over the Ruby binding, printing what the
# seed prints (the guide's coroutines become worker processes; a claim that
# goes out of scope is the block form's), and the guide's as written,
# coroutines of one process: the async gem's tasks (async-*) and fibers
# under a plain Fiber.set_scheduler (scheduler-*, fiber_scheduler.rb).
# usage: ruby -I bindings/ruby seed_examples.rb EXAMPLE
require "swerve_claim"
require_relative "fiber_scheduler"

$stdout.sync = true

def claim(name, timeout = 0.0, &block)
  SwerveClaim.claim(name, timeout, &block)
end

def dump(value)
  "bool(#{value})"
end

def open_fds
  Dir.children("/proc/self/fd").size
end

# The guide's "Waiting for it", as written: two coroutines of one process,
# started by SPAWN (Async's, or Fiber.schedule).
def guide_waiting(spawn)
  spawn.call do
    claim("import") do # released as the block ends
      puts "first: importing"
      sleep 0.2
      puts "first: done"
    end
  end
  spawn.call do
    puts "second: waiting"
    claim("import", 5.0) do |held| # waits up to 5 s
      puts "second: importing" if held
    end
  end
end

# Runs the block with a plain fiber scheduler of the tests' own, then the
# fibers it scheduled to their end.
# The guide's "Releasing", the same in a process and in a coroutine.
def guide_releasing
  c = claim("leader")
  c.acquire
  puts "held: #{c.held?}"
  c.release # give it up while the handle lives on
  puts "held: #{c.held?}"
  puts "available: #{c.available?}"
  c.release # releasing what is not held does nothing
end

# Cancels a waiting fiber 0.1 s in (the block), then says what its
# HANDLE holds and whether the descriptors are FDS again, then again once
# the first holder has let go (it holds the name 0.4 s).
def cancel_after_0_1s(handle, fds)
  sleep 0.1
  yield
  puts "held: #{handle.held?}"
  puts "descriptors as before: #{open_fds == fds}"
  sleep 0.5 # the first has let go
  puts "held after: #{handle.held?}"
  puts "available after: #{handle.available?}"
end

def with_tiny_scheduler
  Fiber.set_scheduler(TinyScheduler.new)
  yield
ensure
  Fiber.set_scheduler(nil) # runs what is left
end

EXAMPLES = {
  "guide-claims" => lambda do
    ready_r, ready_w = IO.pipe
    finish_r, finish_w = IO.pipe
    racer = lambda do |who|
      if claim("nightly-report").acquire
        puts "#{who} runs the report"
        ready_w.write("x")
        finish_r.read(1) # phasync::sleep(0.1)
      else
        puts "#{who}: someone else is on it"
      end
      exit!(0) # the claim is released as the worker ends
    end
    a = fork { racer.call("a") }
    ready_r.read(1)
    %w[b c].each { |who| Process.wait(fork { racer.call(who) }) }
    finish_w.write("x")
    Process.wait(a)
    puts claim("nightly-report").available? ? "free again" : "still held"
  end,
  "guide-waiting" => lambda do
    first = claim("import").acquire
    puts "first: importing"
    pid = fork do
      puts "second: waiting"
      puts "second: importing" if claim("import").acquire(5.0) # tries every 20 ms
      exit!(0)
    end
    sleep 0.2
    puts "first: done"
    first.release
    Process.wait(pid)
  end,
  "guide-releasing" => -> { guide_releasing },
  "class-1" => lambda do
    mine = claim("import")
    yours = claim("import") # two handles on one name conflict, also in one process
    puts dump(mine.available?)
    puts dump(mine.acquire.equal?(mine))
    puts yours.acquire.nil? ? "NULL" : "handle"
    puts dump(mine.held?), dump(yours.held?)
    mine.release
    puts dump(yours.acquire.equal?(yours))
  end,
  "class-2" => lambda do
    claim("nightly-report") do |held| # released as the block ends
      puts "report ran" if held
    end
    puts "released: #{claim('nightly-report').available?}"
  end,
  "class-3" => lambda do
    c = claim("import")
    if c.acquire(5.0) # tries every 20 ms for up to 5 s
      puts "import_feed ran"
      c.release
    end
    puts "held: #{c.held?}"
  end,
  "context-manager" => lambda do
    claim("cron") do |held|
      puts held ? "inside: held" : "inside: not held"
      claim("cron") { |again| puts "nested: #{again ? 'held' : 'someone else is on it'}" }
    end
    puts "after: #{claim('cron').available? ? 'free' : 'held'}"
  end,
  "fencing-token" => lambda do
    c = claim("report")
    puts "not held: #{c.token}"
    c.acquire
    first = c.token
    puts "held: #{first.positive? ? 'positive' : first}"
    puts "same while held: #{c.token == first}"
    c.release
    puts "after release: #{c.token}"
    other = claim("report")
    other.acquire
    puts "next hold greater: #{other.token > first}"
  end,
  # A leader that lets go once its master drains it (the guide's
  # Swerve::draining()): the master's graceful SIGTERM, as gunicorn's.
  "draining" => lambda do
    puts "master: draining: #{SwerveClaim.draining?}"
    ready_r, ready_w = IO.pipe
    pid = fork do
      trap("TERM") {} # the worker's own graceful handler
      leader = claim("leader").acquire
      puts "worker: leads, draining: #{SwerveClaim.draining?}"
      ready_w.write("x")
      1000.times do # 5 s at most
        break if SwerveClaim.draining?

        sleep 0.005
      end
      puts SwerveClaim.draining? ? "worker: drained, lets go" : "worker: never drained"
      leader.release
      exit!(0)
    end
    ready_r.read(1)
    Process.kill("TERM", pid)
    puts claim("leader").acquire(5.0) ? "master: leads" : "master: still held"
    Process.wait(pid)
  end,
  # The guide's three examples as written: the async gem's tasks.
  "async-guide-claims" => lambda do
    require "async"
    Async do
      %w[a b c].each do |who|
        Async do
          claim("nightly-report") do |held| # released as the block ends
            if held
              puts "#{who} runs the report"
              sleep 0.1
            else
              puts "#{who}: someone else is on it"
            end
          end
        end
      end
    end # Async returns once its tasks have
    puts claim("nightly-report").available? ? "free again" : "still held"
  end,
  "async-guide-waiting" => lambda do
    require "async"
    Async { guide_waiting(->(&b) { Async(&b) }) }
  end,
  "async-guide-releasing" => lambda do
    require "async"
    Async { guide_releasing }
  end,
  # "Waiting for it" under a plain Fiber.set_scheduler.
  "scheduler-guide-waiting" => lambda do
    with_tiny_scheduler { guide_waiting(->(&b) { Fiber.schedule(&b) }) }
  end,
  # "Waiting for it" with the first a process of its own (fork), which
  # releases the name once this one has said "first: done", and ends only
  # after it.
  "async-guide-waiting-fork" => lambda do
    require "async"
    to_holder_r, to_holder = IO.pipe
    from_holder, from_holder_w = IO.pipe
    holder = fork do
      to_holder.close
      from_holder.close
      c = claim("import").acquire
      from_holder_w.puts(c ? "importing" : "not held")
      sleep 0.2
      from_holder_w.puts "done"
      c.release if to_holder_r.gets == "release\n" # the release, not its end, wakes the waiter
      to_holder_r.read # until the other closes the pipe
      exit!(0)
    end
    to_holder_r.close
    from_holder_w.close
    raise "the holder did not start" unless from_holder.gets == "importing\n"

    puts "first: importing"
    Async do
      Async do
        raise "the holder did not finish" unless from_holder.gets == "done\n" # yields to the others

        puts "first: done"
        to_holder.puts "release"
      end
      Async do
        puts "second: waiting"
        claim("import", 5.0) { |held| puts "second: importing" if held }
      end
    end
    to_holder.close
    Process.wait(holder)
    raise "the holder ended with #{$?}" unless $?.success?
  end,
  # A waiter whose time is up gives up while the other tasks run on, and
  # holds nothing, and no descriptor, after.
  "async-timeout" => lambda do
    require "async"
    Async do
      ticks = 0
      Async { claim("import") { sleep 1.0 } }
      Async do
        20.times do # 1 s of ticks
          sleep 0.05
          ticks += 1
        end
      end
      Async do
        fds = open_fds
        c = claim("import")
        started = TinyScheduler.now
        got = c.acquire(0.3)
        waited = TinyScheduler.now - started
        puts "second: #{got ? 'importing' : 'gave up'}"
        puts "waited 0.3 s: #{waited >= 0.29 && waited < 1.0}"
        puts "ticks meanwhile: #{ticks >= 3}"
        puts "held: #{c.held?}"
        c.close
        puts "descriptors as before: #{open_fds == fds}"
      end
    end
    puts "available: #{claim('import').available?}"
  end,
  # A waiting task that is stopped (Async::Stop raised into its fiber)
  # stops waiting: it holds nothing, keeps no descriptor, and does not take
  # the name once it is free.
  "async-stop" => lambda do
    require "async"
    Async do
      Async { claim("import") { sleep 0.4 } }
      handle = claim("import")
      fds = open_fds
      second = Async do
        puts handle.acquire(5.0) ? "second: importing" : "second: gave up"
      rescue Async::Stop
        puts "second: stopped"
        raise
      end
      Async { cancel_after_0_1s(handle, fds) { second.stop } }
    end
  end,
  # The same under a plain Fiber.set_scheduler, an exception raised into
  # the waiting fiber with Fiber#raise.  (Not Async's with_timeout: async
  # 1.30's Scheduler#io_wait rescues the Async::TimeoutError it raises and
  # returns nil, so that any IO wait under it goes on, a read for ever.)
  "scheduler-cancel" => lambda do
    with_tiny_scheduler do
      Fiber.schedule { claim("import") { sleep 0.4 } }
      handle = claim("import")
      fds = open_fds
      second = Fiber.schedule do
        puts handle.acquire(5.0) ? "second: importing" : "second: gave up"
      rescue RuntimeError => e
        puts "second: #{e.message}"
      end
      Fiber.schedule { cancel_after_0_1s(handle, fds) { second.raise(RuntimeError, "cancelled") } }
    end
  end
}.freeze

begin
  EXAMPLES.fetch(ARGV.fetch(0)).call
rescue SwerveClaim::ShimNotLoaded => e
  warn "seed_examples.rb: #{e.message}"
  exit 2
end
