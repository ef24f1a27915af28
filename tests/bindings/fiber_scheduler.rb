# SPDX-License-Identifier: MIT
# frozen_string_literal: true

# A minimal fiber scheduler (Ruby's Fiber::SchedulerInterface) for the
# Ruby binding's tests, over IO.select: what a plain Fiber.set_scheduler
# gives, without the async gem.  io_wait, kernel_sleep, block and unblock
# (one thread), fiber; close runs the fibers to their end, for 30 s and
# 100,000 turns at most, then raises.
class TinyScheduler
  def initialize
    @readers = {} # fiber => IO, in the order they began to wait
    @writers = {}
    @timers = {} # fiber => when it wakes (monotonic seconds)
    @ready = [] # fibers unblocked, to resume
    @blocked = 0 # fibers blocked with no timeout
  end

  def self.now
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  def io_wait(io, events, timeout)
    fiber = Fiber.current
    @readers[fiber] = io if (events & IO::READABLE).nonzero?
    @writers[fiber] = io if (events & IO::WRITABLE).nonzero?
    @timers[fiber] = TinyScheduler.now + timeout if timeout
    Fiber.yield
  ensure
    @readers.delete(fiber)
    @writers.delete(fiber)
    @timers.delete(fiber)
  end

  def kernel_sleep(duration = nil)
    block(:sleep, duration)
  end

  def block(_blocker, timeout = nil)
    fiber = Fiber.current
    if timeout
      @timers[fiber] = TinyScheduler.now + timeout
    else
      @blocked += 1
    end
    begin
      Fiber.yield
    ensure
      timeout ? @timers.delete(fiber) : @blocked -= 1
    end
    true
  end

  def unblock(_blocker, fiber)
    @ready << fiber
  end

  def fiber(&block)
    fiber = Fiber.new(blocking: false, &block)
    fiber.resume
    fiber
  end

  def close
    run
  end

  private

  def run
    ending = TinyScheduler.now + 30
    turns = 0
    until @readers.empty? && @writers.empty? && @timers.empty? && @ready.empty?
      turns += 1
      raise "the scheduler ran over: #{turns} turns" if turns > 100_000 || TinyScheduler.now > ending

      turn
    end
    raise "#{@blocked} fiber(s) blocked with nothing to wake them" if @blocked.positive?
  end

  def turn
    wait = @timers.values.min&.then { |at| [at - TinyScheduler.now, 0].max }
    wait = 0 unless @ready.empty?
    readable, writable = if @readers.empty? && @writers.empty?
                           sleep(wait) if wait&.positive? # Kernel#sleep: this is no fiber of ours
                           [[], []]
                         else
                           IO.select(@readers.values, @writers.values, nil, wait) || [[], []]
                         end
    # In the order they began to wait: the first to wait goes first.
    @readers.select { |_, io| readable.include?(io) }.each_key { |f| f.resume(IO::READABLE) if @readers.key?(f) }
    @writers.select { |_, io| writable.include?(io) }.each_key { |f| f.resume(IO::WRITABLE) if @writers.key?(f) }
    now = TinyScheduler.now
    @timers.select { |_, at| at <= now }.sort_by { |_, at| at }.each do |fiber, _|
      fiber.resume(false) if @timers.key?(fiber)
    end
    ready = @ready
    @ready = []
    ready.each { |fiber| fiber.resume if fiber.alive? }
  end
end
