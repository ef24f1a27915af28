# SPDX-License-Identifier: MIT
# frozen_string_literal: true

# The Ruby binding (bindings/ruby/swerve_claim.rb) under the shim, with
# minitest from Ruby's standard library: run by tests/bindings/ruby.sh,
# which preloads the shim into this ruby and gives it SWERVE_TMPDIR.
require "minitest/autorun"
require "open3"
require "rbconfig"
require "tmpdir"
require "swerve_claim"

class SwerveClaimTest < Minitest::Test
  HERE = __dir__
  EXPECTED = File.expand_path("expected", HERE)
  BINDING = File.expand_path("../../bindings/ruby", HERE)
  RUBY = RbConfig.ruby

  def claim(name, timeout = 0.0, &block)
    SwerveClaim.claim(name, timeout, &block)
  end

  # COMMAND... with LD_PRELOAD as this process has it (or without, when
  # SHIM is false), under a timeout of 30 s that is not preloaded itself:
  # its output, error output and status.
  def run_command(*command, env: {}, shim: true)
    preload = shim ? ["env", "LD_PRELOAD=#{ENV.fetch('LD_PRELOAD')}"] : []
    Open3.capture3(env.merge("LD_PRELOAD" => nil), "timeout", "30", *preload, *command)
  end

  # Forks a child that runs the block and exits with its value (true: 0).
  def in_child(&block)
    pid = fork { exit!(block.call ? 0 : 1) }
    Process.wait(pid)
    $?.success?
  end

  # ------------------------------------------------- the seed's examples

  # Each example of the Swerve claim pages prints what the pages say, writes
  # nothing to standard error and leaves no claim directory in its base.
  # The guide's coroutines also as written (issue 39): the async gem's tasks
  # and a plain Fiber.set_scheduler, in one process; the first a forked
  # process that releases; a waiter that gives up, one stopped, one
  # cancelled, while the others run on.
  EXAMPLES = %w[guide-claims guide-waiting guide-releasing class-1 class-2 class-3 context-manager
                fencing-token draining].to_h { |e| [e, e] }.merge(
                  "async-guide-claims" => "guide-claims", "async-guide-waiting" => "guide-waiting",
                  "async-guide-releasing" => "guide-releasing", "scheduler-guide-waiting" => "guide-waiting",
                  "async-guide-waiting-fork" => "guide-waiting", "async-timeout" => "async-timeout",
                  "async-stop" => "async-stop", "scheduler-cancel" => "scheduler-cancel"
                ).freeze
  EXAMPLES.each do |example, expected|
    define_method("test_seed_#{example.tr('-', '_')}") do
      Dir.mktmpdir do |base|
        out, err, status = run_command(RUBY, "-I", BINDING, File.join(HERE, "seed_examples.rb"), example,
                                       env: { "SWERVE_TMPDIR" => base })
        assert status.success?, "#{example}: #{status}: #{err}"
        assert_equal File.read(File.join(EXPECTED, "#{expected}.txt")), out
        assert_empty err
        assert_empty Dir.children(base), "#{example} left a claim directory"
      end
    end
  end

  # ------------------------------------------------------------ handles

  def test_two_handles_conflict_in_one_process
    mine = claim("conflict")
    yours = claim("conflict")
    assert mine.available?
    assert_same mine, mine.acquire
    assert_nil yours.acquire
    refute mine.available?
    refute yours.available?
    assert mine.held?
    refute yours.held?
    assert_same mine, mine.acquire # holding it already
    mine.release
    assert_same yours, yours.acquire
  ensure
    [mine, yours].compact.each(&:close)
  end

  def test_release_when_not_held_does_nothing
    c = claim("idle")
    assert_nil c.release
    c.acquire
    c.release
    c.release
    refute c.held?
    assert c.available?
  end

  def test_acquire_with_a_timeout_waits_then_takes_it
    holder = claim("wait-for-it").acquire
    reader, writer = IO.pipe
    pid = fork do
      c = claim("wait-for-it")
      writer.write("x")
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      got = c.acquire(5.0)
      waited = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
      exit!(got.equal?(c) && waited >= 0.2 && waited < 4.0 ? 0 : 1)
    end
    reader.read(1)
    sleep 0.3
    holder.release
    Process.wait(pid)
    assert $?.success?, "the waiting child did not take the name once released"
  end

  def test_acquire_gives_up_after_its_timeout
    holder = claim("busy").acquire
    c = claim("busy")
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    assert_nil c.acquire(0.15)
    assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :>=, 0.14
    assert holder.held?
  end

  def test_token
    c = claim("fence")
    assert_equal 0, c.token
    c.acquire
    first = c.token
    assert_operator first, :>, 0
    c.release
    other = claim("fence").acquire
    assert_operator other.token, :>, first
  end

  # ------------------------------------------------------- block forms

  def test_block_form_holds_then_releases_and_closes
    kept = nil
    value = claim("block") do |held|
      kept = held
      assert_instance_of SwerveClaim::Claim, held
      assert held.held?
      refute claim("block").available?
      :done
    end
    assert_equal :done, value
    assert claim("block").available?
    assert kept.closed?
  end

  def test_block_form_yields_nil_when_busy
    holder = claim("taken").acquire
    assert_nil(claim("taken") { |held| held })
    assert holder.held?
  end

  def test_block_form_releases_on_an_exception
    error = assert_raises(RuntimeError) do
      claim("boom") do |held|
        assert held
        raise "boom"
      end
    end
    assert_equal "boom", error.message
    assert claim("boom").available?
  end

  def test_hold_releases_on_an_exception_and_the_handle_lives_on
    c = claim("hold")
    assert_raises(ArgumentError) { c.hold { raise ArgumentError } }
    refute c.held?
    assert c.available?
    assert_same c, c.acquire
  end

  # ------------------------------------------------------------ errors

  def test_a_name_with_a_nul_byte_is_refused
    error = assert_raises(ArgumentError) { claim("a\0b") }
    assert_match(/NUL/, error.message)
    assert_raises(TypeError) { claim(:symbol) }
  end

  def test_system_errors_are_errno_exceptions
    error = assert_raises(Errno::EINVAL) { claim("") }
    assert_match(/claim ''/, error.message)
    assert_raises(Errno::ENAMETOOLONG) { claim("x" * 4097) }
    assert_raises(Errno::EINVAL) { claim("negative").acquire(-1.0) }
  end

  # #41: the error names what is wrong (the missing base), and a 4 KB name
  # is cut to its first 64 characters and "…" (it was echoed whole).
  MISSING = "/nonexistent/scl-why-base"

  def test_an_error_names_the_missing_base_and_cuts_the_name
    script = 'begin; SwerveClaim.claim("n" * 4096).acquire; rescue SystemCallError => e; puts e.class, e.message; end'
    out, err, status = run_command(RUBY, "-I", BINDING, "-rswerve_claim", "-e", script,
                                   env: { "SWERVE_TMPDIR" => MISSING })
    assert status.success?, err
    assert_equal ["Errno::ENOENT",
                  "No such file or directory - acquire '#{'n' * 64}…': cannot open #{MISSING} for claim " \
                  "directories: No such file or directory (ENOENT)"], out.lines.map(&:chomp)
  end

  def test_an_empty_name_says_why
    error = assert_raises(Errno::EINVAL) { claim("") }
    assert_equal "Invalid argument - claim '': a claim's name must not be empty", error.message
  end

  def test_without_the_shim
    script = 'begin; SwerveClaim.claim("x"); rescue StandardError => e; puts e.class, e.message; end'
    out, err, status = run_command(RUBY, "-I", BINDING, "-rswerve_claim", "-e", script, shim: false)
    assert status.success?, err
    assert_equal ["SwerveClaim::ShimNotLoaded",
                  "libswerveclaim_preload.so is not loaded: run under LD_PRELOAD=libswerveclaim_preload.so " \
                  "(or swerve-claim-preload)"], out.lines.map(&:chomp)
    _, err, status = run_command(RUBY, "-I", BINDING, File.join(HERE, "seed_examples.rb"), "class-1", shim: false)
    assert_equal 2, status.exitstatus, err
    assert_match(/libswerveclaim_preload.so is not loaded/, err)
  end

  # ------------------------------------------------- the handle's life

  def test_close_releases_and_ends_the_handle
    c = claim("closing").acquire
    c.close
    assert c.closed?
    assert claim("closing").available?
    assert_nil c.close
    assert_raises(IOError) { c.held? }
    assert_match(/closed/, c.inspect)
  end

  def test_a_collected_handle_is_released
    gone = lambda do
      1.times { claim("collected").acquire }
      3.times { GC.start(full_mark: true, immediate_sweep: true) }
      claim("collected").available?
    end
    assert in_child(&gone), "a handle nobody holds was not released by its finalizer"
  end

  def test_a_forked_child_holds_nothing_of_its_parents
    c = claim("inherited").acquire
    assert in_child { !c.held? && c.token.zero? && c.acquire.nil? }
    assert in_child { c.close.nil? } # frees its own copy of the handle
    assert c.held?
    refute claim("inherited").available?
  end

  # A copy would name the same C handle: closing it (or its finalizer)
  # would free the handle, and release the claim, under the original
  # (which then read freed memory: glibc aborted, "free(): invalid pointer").
  def test_a_handle_cannot_be_copied
    c = claim("copied").acquire
    assert_raises(TypeError) { c.dup }
    assert_raises(TypeError) { c.clone }
    GC.start
    assert c.held?
    refute claim("copied").available?
  end

  def test_inspect
    c = claim("shown")
    assert_equal '#<SwerveClaim::Claim "shown" held=false>', c.inspect
  end
end
