# SPDX-License-Identifier: MIT
# frozen_string_literal: true

# Swerve claims for Ruby: a name one process at a time can hold across a
# whole prefork server (unicorn, Puma in cluster mode, ...).
#
# The functions come from libswerveclaim_preload.so, found through Fiddle
# (Ruby's standard library) in Fiddle::Handle::DEFAULT, the program and
# what it has loaded, LD_PRELOAD included, when the server runs under the
# shim:
#
#     LD_PRELOAD=libswerveclaim_preload.so unicorn -c unicorn.conf config.ru
#
#     require "swerve_claim"
#
#     if (claim = SwerveClaim.claim("nightly-report").acquire)
#       run_report
#       claim.release              # or when the worker ends, or close
#     end
#
#     SwerveClaim.claim("import", 5.0) do |held|   # waits up to 5 s
#       import_feed if held        # nil: someone else is on it
#     end                          # released, and the handle freed
#
#     leader = SwerveClaim.claim("leader").acquire
#     lead_some_more until SwerveClaim.draining?   # a reload or a stop:
#     leader.release               # let go, so that it does not wait
#
# Under a fiber scheduler (Fiber.set_scheduler; the async gem's tasks), a
# waiting acquire(timeout) yields to the scheduler instead of blocking the
# thread: it waits for the descriptor of swerve_claim_wait_fd(3) to be
# readable (the name may have come free; no polling), with IO#wait_readable,
# and tries again.  An exception raised into the waiting fiber (Async::Stop,
# a timeout) ends the wait: the handle holds nothing.  Without a scheduler,
# in a blocking fiber or with a library older than SWERVECLAIM_1.3, it
# blocks the thread as before.
#
# A failed call raises SystemCallError (Errno::ENOENT, ...) whose message
# says what failed (a name longer than 64 characters cut, with "…") and
# why, as swerve_claim_why(3) says it (since SWERVECLAIM_1.4).
#
# Without the shim, SwerveClaim.claim raises SwerveClaim::ShimNotLoaded:
# the caller decides what running without claims means.  A handle nobody
# closes is freed (and what it holds released) by its finalizer, when the
# garbage collector or the process's end gets to it: release, close or the
# block form give a claim up when the program says.
require "fiddle"
require "io/wait"

module SwerveClaim
  VERSION = "0.1.0"

  # libswerveclaim_preload.so is not preloaded into this process.
  class ShimNotLoaded < StandardError; end

  VOIDP = Fiddle::TYPE_VOIDP
  # Each function once: its arguments, its result, and the version node
  # that brought it (a library without it is still this binding's; the
  # method that needs it says so), or nil when every version has it.
  FUNCTIONS = {
    swerve_claim_new: [[Fiddle::TYPE_CONST_STRING], VOIDP, nil],
    swerve_claim_available: [[VOIDP], Fiddle::TYPE_INT, nil],
    swerve_claim_acquire: [[VOIDP, Fiddle::TYPE_DOUBLE], VOIDP, nil],
    swerve_claim_held: [[VOIDP], Fiddle::TYPE_INT, nil],
    swerve_claim_release: [[VOIDP], Fiddle::TYPE_INT, nil],
    swerve_claim_free: [[VOIDP], Fiddle::TYPE_VOID, nil],
    swerve_claim_token: [[VOIDP], -Fiddle::TYPE_INT64_T, "SWERVECLAIM_1.1"],
    swerve_claim_draining: [[], Fiddle::TYPE_INT, "SWERVECLAIM_1.2"],
    swerve_claim_wait_fd: [[VOIDP], Fiddle::TYPE_INT, "SWERVECLAIM_1.3"],
    swerve_claim_why: [[], VOIDP, "SWERVECLAIM_1.4"]
  }.freeze
  private_constant :VOIDP, :FUNCTIONS

  @functions = nil
  @loading = Mutex.new

  class << self
    # A handle on NAME.  With a block: acquires it (waiting up to TIMEOUT
    # seconds), yields the handle or nil (another holds it), and releases
    # and frees it as the block ends, however it ends; the block's value.
    def claim(name, timeout = 0.0, &block)
      claim = Claim.new(name)
      return claim unless block

      begin
        claim.hold(timeout, &block)
      ensure
        claim.close
      end
    end

    # Swerve::draining(): whether this worker is being drained, its server
    # stopping it gracefully (a reload, a stop): true once its master told
    # it (a drain signal), it closed the listeners it inherited, its master
    # ended, or an operator ran `swerve-claim drain` on it
    # (swerve_claim_draining(3)).  Draining releases nothing: a long-lived
    # holder asks now and then and releases its claim itself, so that the
    # reload does not wait for it.  Cheap enough to ask every few
    # milliseconds.
    def draining?
      result, errno = call(:swerve_claim_draining)
      raise failure("draining", errno) if result.negative?

      result == 1
    end

    # The longest name an error shows whole, in characters.
    NAME_SHOWN = 64

    # NAME as an error shows it: its first NAME_SHOWN characters and "…"
    # when longer (a 4 KB name would bury what the error says).
    def cut(name)
      name = name.b unless name.valid_encoding?
      name.length > NAME_SHOWN ? "#{name[0, NAME_SHOWN]}…" : name
    end

    # The call that just failed in this thread, as SystemCallError: WHAT
    # (the name in it cut), and why (swerve_claim_why(3), since
    # SWERVECLAIM_1.4) when the library says more than ERRNO.
    def failure(what, errno, name = nil)
      what = format(what, cut(name)) if name
      why = has?(:swerve_claim_why) && functions[:swerve_claim_why].call
      what = "#{what}: #{why.to_s.force_encoding(Encoding::UTF_8).scrub}" if why && !why.null?
      SystemCallError.new(what, errno)
    end

    # Whether this library has FUNCTION (a version node later than 1.0's).
    def has?(function)
      functions.key?(function)
    end

    # Calls FUNCTION: its result and errno as the call left it.
    def call(function, *args)
      fn = functions[function] or
        raise NotImplementedError, "this libswerveclaim_preload.so has no #{function}"
      result = fn.call(*args)
      [result, Fiddle.last_error]
    end

    private

    def functions
      @functions || @loading.synchronize { @functions ||= bind }
    end

    def bind
      FUNCTIONS.each_with_object({}) do |(name, (args, result, since)), bound|
        address = begin
          Fiddle::Handle::DEFAULT[name.to_s]
        rescue Fiddle::DLError
          next if since

          raise ShimNotLoaded, "libswerveclaim_preload.so is not loaded: run under " \
                               "LD_PRELOAD=libswerveclaim_preload.so (or swerve-claim-preload)"
        end
        bound[name] = Fiddle::Function.new(address, args, result)
      end
    end
  end

  # A handle on a name; it claims nothing until acquire.
  class Claim
    attr_reader :name

    def initialize(name)
      string = String.try_convert(name) or raise TypeError, "no implicit conversion of #{name.class} into String"
      # C would cut the name there, and "a\0b" would be "a\0c".
      raise ArgumentError, "claim name contains a NUL byte" if string.include?("\0")

      handle, errno = SwerveClaim.call(:swerve_claim_new, string)
      raise SwerveClaim.failure("claim '%s'", errno, string) if handle.null?

      @name = string.frozen? ? string : string.dup.freeze
      @handle = handle
      ObjectSpace.define_finalizer(self, Claim.finalizer(handle.to_i))
    end

    # A copy (dup, clone) would name the same C handle, and closing either
    # would free it under the other: take another handle on the name.
    # Ruby gave the copy the original's finalizer, which would free the
    # handle as the copy is collected: it goes first.
    def initialize_copy(_original)
      ObjectSpace.undefine_finalizer(self)
      @handle = nil
      raise TypeError, "a claim handle cannot be copied: take another with SwerveClaim.claim(name)"
    end

    # Frees the C handle at ADDRESS, which releases what it holds; in a
    # forked child, its own copy, which holds nothing there.
    def self.finalizer(address)
      proc { SwerveClaim.call(:swerve_claim_free, address) }
    end

    # Whether nobody holds the name now; claims nothing.
    def available?
      result, errno = SwerveClaim.call(:swerve_claim_available, handle)
      raise SwerveClaim.failure("available '%s'", errno, name) if result.negative?

      result == 1
    end

    # Takes the name, waiting up to TIMEOUT seconds while another holds it
    # (0: tries once; Float::INFINITY: for ever).  The handle, or nil when
    # another holds it.  In a non-blocking fiber under a fiber scheduler,
    # the wait yields to the scheduler.
    def acquire(timeout = 0.0)
      timeout = Float(timeout)
      return acquire_yielding(timeout) if timeout.positive? && yielding?

      result, errno = SwerveClaim.call(:swerve_claim_acquire, handle, timeout)
      return self unless result.null?
      return nil if GAVE_UP.include?(errno)

      raise SwerveClaim.failure("acquire '%s'", errno, name)
    end

    # Whether this handle holds the name: acquired and not released.
    def held?
      SwerveClaim.call(:swerve_claim_held, handle).first == 1
    end

    # A fencing token for this hold of the name, 0 when nothing is held:
    # greater than every earlier hold's (swerve_claim_token(3)).
    def token
      SwerveClaim.call(:swerve_claim_token, handle).first
    end

    # Gives the name up; does nothing when nothing is held.
    def release
      result, errno = SwerveClaim.call(:swerve_claim_release, handle)
      raise SwerveClaim.failure("release '%s'", errno, name) unless result.zero?

      nil
    end

    # Acquires (waiting up to TIMEOUT seconds), yields the handle or nil,
    # and releases it as the block ends, however it ends.
    def hold(timeout = 0.0)
      held = acquire(timeout)
      begin
        yield held
      ensure
        release if held
      end
    end

    # Frees the C handle now, releasing what it holds.  Nothing else may be
    # asked of it afterwards (IOError).
    def close
      return if closed?

      ObjectSpace.undefine_finalizer(self)
      SwerveClaim.call(:swerve_claim_free, @handle)
      @handle = nil
    end

    def closed?
      @handle.nil?
    end

    def inspect
      "#<#{self.class} #{name.inspect}#{closed? ? ' closed' : " held=#{held?}"}>"
    end

    private

    GAVE_UP = [Errno::EWOULDBLOCK::Errno, Errno::ETIMEDOUT::Errno].freeze

    def handle
      @handle or raise IOError, "claim '#{name}' is closed"
    end

    # Whether a wait can yield: a fiber scheduler runs this (non-blocking)
    # fiber, and the library has swerve_claim_wait_fd.
    def yielding?
      Fiber.respond_to?(:scheduler) && Fiber.scheduler && !Fiber.current.blocking? &&
        SwerveClaim.has?(:swerve_claim_wait_fd)
    end

    # acquire(TIMEOUT) under a fiber scheduler: tries, and while another
    # holds the name waits for the descriptor of swerve_claim_wait_fd() to
    # be readable (IO#wait_readable yields to the scheduler), or the time
    # to be up, then tries again (swerve_claim_wait_fd(3)).  The IO over the
    # descriptor does not close it (the library does, in the next acquire
    # or the release), and the scheduler has stopped watching it when
    # wait_readable returns.  However the wait ends but by taking the name
    # (the time is up, an exception), release ends it: nothing held.
    def acquire_yielding(timeout)
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
      taken = false
      loop do
        result, errno = SwerveClaim.call(:swerve_claim_acquire, handle, 0.0)
        return (taken = self) unless result.null?
        return nil if errno == Errno::ETIMEDOUT::Errno # the database, slow to answer
        raise SwerveClaim.failure("acquire '%s'", errno, name) unless errno == Errno::EWOULDBLOCK::Errno

        fd, errno = SwerveClaim.call(:swerve_claim_wait_fd, handle)
        raise SwerveClaim.failure("acquire '%s': swerve_claim_wait_fd", errno, name) if fd.negative?

        left = deadline - Process.clock_gettime(Process::CLOCK_MONOTONIC)
        return nil unless left.positive?

        io = IO.for_fd(fd, autoclose: false)
        begin
          io.wait_readable(left.infinite? ? nil : left)
        ensure
          io.close
        end
      end
    ensure
      SwerveClaim.call(:swerve_claim_release, @handle) if !taken && @handle
    end
  end
end
