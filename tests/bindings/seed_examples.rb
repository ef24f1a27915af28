# frozen_string_literal: true

# The Swerve claim pages' examples over the Ruby binding, printing what the
# seed prints (the guide's coroutines become worker processes; a claim that
# goes out of scope is the block form's).
# usage: ruby -I bindings/ruby seed_examples.rb EXAMPLE
require "swerve_claim"

$stdout.sync = true

def claim(name, timeout = 0.0, &block)
  SwerveClaim.claim(name, timeout, &block)
end

def dump(value)
  "bool(#{value})"
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
  "guide-releasing" => lambda do
    c = claim("leader")
    c.acquire
    puts "held: #{c.held?}"
    c.release # give it up while the handle lives on
    puts "held: #{c.held?}"
    puts "available: #{c.available?}"
    c.release # releasing what is not held does nothing
  end,
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
  end
}.freeze

begin
  EXAMPLES.fetch(ARGV.fetch(0)).call
rescue SwerveClaim::ShimNotLoaded => e
  warn "seed_examples.rb: #{e.message}"
  exit 2
end
