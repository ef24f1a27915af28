<?php
// SPDX-License-Identifier: MIT
/*
 * Swerve claims for PHP: a name one process at a time can hold across a
 * whole prefork server (php-fpm, Apache prefork + mod_php), with Swerve's
 * method names.  The functions come from libswerveclaim_preload.so through
 * FFI::cdef() with no library argument, when the server runs under the
 * shim; FFI must be enabled (php-fpm: php_admin_value[ffi.enable] = 1).
 *
 *     require 'Swerve.php';
 *     use Swerve\Swerve;
 *
 *     if ($claim = Swerve::claim('nightly-report')->acquire()) {
 *         run_report();
 *     }                        // released when $claim goes out of scope
 *
 *     while (!Swerve::draining()) {    // a reload or a stop: let go, so
 *         lead_one_round();            // that a new worker takes it
 *     }
 *
 * Inside a Fiber, a waiting acquire($timeout) suspends the Fiber, not the
 * process, when it knows the event loop that runs it: phasync's (while
 * phasync::run() runs), Revolt's (Amp's; when Revolt\EventLoop is loaded),
 * or any other given to Swerve::setWaiter().  It waits on the descriptor of
 * swerve_claim_wait_fd(3), which becomes readable when the name may have
 * come free: no polling.  Outside a Fiber, with no loop known, in a SAPI
 * other than the CLI (php://fd is the CLI's) or with a library older than
 * SWERVECLAIM_1.3, it blocks the process as before.
 *
 * A failed call throws a RuntimeException whose code is errno and whose
 * message says what failed (a name longer than 64 characters cut, with
 * "…") and why, as swerve_claim_why(3) says it (since SWERVECLAIM_1.4).
 *
 * Without the shim, Swerve::claim() throws Swerve\ShimNotLoaded; without FFI
 * (the extension missing, or ffi.enable off for this SAPI) it throws
 * Swerve\FfiUnavailable, which is not a ShimNotLoaded: an application that
 * runs its job anyway when the shim is absent (a CLI without LD_PRELOAD)
 * must not do so in every php-fpm worker because FFI is switched off.  The
 * safe default catches neither: then no worker runs the job.
 */

namespace Swerve;

final class ShimNotLoaded extends \RuntimeException
{
}

/** PHP's FFI is missing or switched off: whether the shim is loaded is unknown. */
final class FfiUnavailable extends \RuntimeException
{
}

/** @internal The shim's functions through FFI, for Claim and Swerve. */
final class Shim
{
    private static ?\FFI $ffi = null;

    public static function ffi(): \FFI
    {
        if (self::$ffi === null) {
            if (!\class_exists('FFI', false)) {
                throw new FfiUnavailable('PHP\'s FFI extension is not loaded (extension=ffi): '
                    . 'cannot tell whether libswerveclaim_preload.so is');
            }
            $enabled = \strtolower((string)\ini_get('ffi.enable'));
            if ($enabled === '0' || $enabled === 'false' || $enabled === 'off' || $enabled === ''
                || ($enabled === 'preload' && \PHP_SAPI !== 'cli')) {
                throw new FfiUnavailable("FFI is switched off here (ffi.enable=$enabled; php-fpm: "
                    . 'php_admin_value[ffi.enable] = 1): cannot tell whether libswerveclaim_preload.so is loaded');
            }
            try {
                self::$ffi = \FFI::cdef('
                    typedef struct swerve_claim swerve_claim;
                    swerve_claim *swerve_claim_new(const char *name);
                    int swerve_claim_available(const swerve_claim *claim);
                    swerve_claim *swerve_claim_acquire(swerve_claim *claim, double timeout);
                    int swerve_claim_held(const swerve_claim *claim);
                    uint64_t swerve_claim_token(const swerve_claim *claim);
                    int swerve_claim_release(swerve_claim *claim);
                    void swerve_claim_free(swerve_claim *claim);
                    int swerve_claim_draining(void);
                    int *__errno_location(void);
                    char *strerror(int errnum);
                ');
            } catch (\FFI\Exception $e) {
                throw new ShimNotLoaded('libswerveclaim_preload.so is not loaded (run under '
                    . 'LD_PRELOAD=libswerveclaim_preload.so): ' . $e->getMessage(), 0, $e);
            }
        }
        return self::$ffi;
    }

    /** Each optional function's FFI, by name once looked up: null when the library has none. */
    private static array $optional = [];

    /**
     * A function of a later version than SWERVECLAIM_1.0 through an FFI of
     * its own, since FFI::cdef() fails on a symbol it cannot resolve: null
     * with an older library.  A handle it takes is a void *, a pointer of
     * the other FFI's type being incompatible with this one's.
     */
    private static function optional(string $name, string $declaration): ?\FFI
    {
        if (!array_key_exists($name, self::$optional)) {
            self::ffi();
            try {
                self::$optional[$name] = \FFI::cdef($declaration);
            } catch (\FFI\Exception) {
                self::$optional[$name] = null;
            }
        }
        return self::$optional[$name];
    }

    /** swerve_claim_wait_fd() (SWERVECLAIM_1.3), or null. */
    public static function waitFfi(): ?\FFI
    {
        return self::optional('wait_fd', 'int swerve_claim_wait_fd(void *claim);');
    }

    /** FFI gives a NULL pointer back as PHP null. */
    public static function isNull($pointer): bool
    {
        return $pointer === null || \FFI::isNull($pointer);
    }

    /** The longest name an error shows whole, in characters; a longer one is cut and marked. */
    public const NAME_SHOWN = 64;

    /** NAME as an error shows it: its first NAME_SHOWN characters and "…" when longer. */
    public static function cut(string $name): string
    {
        if (preg_match('/^(.{' . self::NAME_SHOWN . '})./su', $name, $m) === 1) {
            return $m[1] . '…';
        }
        // Not UTF-8 (preg_match() failed on it): bytes, then.
        return strlen($name) > self::NAME_SHOWN && preg_match('//u', $name) !== 1
            ? substr($name, 0, self::NAME_SHOWN) . '…' : $name;
    }

    /**
     * The call that just failed, as an exception: WHAT (a name in it cut),
     * then why (swerve_claim_why(3), SWERVECLAIM_1.4) or errno's text.
     */
    public static function failure(string $what): \RuntimeException
    {
        $ffi = self::ffi();
        $errno = $ffi->__errno_location()[0];
        $text = \FFI::string($ffi->strerror($errno));
        $why = self::optional('why', 'const char *swerve_claim_why(void);')?->swerve_claim_why();
        if ($why !== null) {
            $text = str_contains($why, $text) ? $why : "$why: $text";
        }
        return new \RuntimeException("$what: $text", $errno);
    }
}

final class Claim
{
    private const EWOULDBLOCK = 11;
    private const ETIMEDOUT = 110;
    private $handle;
    public readonly string $name;

    /** A handle on $name; Swerve::claim() is how an application gets one. */
    public function __construct(string $name)
    {
        if (\str_contains($name, "\0")) {
            // C would cut the name there, and "a\0b" would be "a\0c".
            throw new \ValueError('Swerve\Claim::__construct(): Argument #1 ($name) must not contain any null bytes');
        }
        $this->handle = Shim::ffi()->swerve_claim_new($name);
        if (Shim::isNull($this->handle)) {
            throw Shim::failure("claim '" . Shim::cut($name) . "'");
        }
        $this->name = $name;
    }

    /** Whether nobody holds the name now; nothing is claimed. */
    public function available(): bool
    {
        $r = Shim::ffi()->swerve_claim_available($this->handle);
        if ($r < 0) {
            throw Shim::failure("available '" . Shim::cut($this->name) . "'");
        }
        return $r === 1;
    }

    /** Take the name, waiting for up to $timeout seconds when another holds
     *  it (INF: for ever); null when it is not taken.  Inside a Fiber run
     *  by a known event loop (Swerve::setWaiter()), the wait suspends the
     *  Fiber, not the process; an exception thrown into the Fiber while it
     *  waits (a cancellation) ends the wait and comes out of here. */
    public function acquire(float $timeout = 0.0): ?static
    {
        $ffi = Shim::ffi();
        if ($timeout > 0.0 && \Fiber::getCurrent() !== null && ($waiter = Waiter::find()) !== null
            && ($waitFfi = Shim::waitFfi()) !== null) {
            return $this->acquireSuspending($timeout, $waiter, $ffi, $waitFfi);
        }
        return $this->outcome($ffi, $ffi->swerve_claim_acquire($this->handle, $timeout));
    }

    /** What swerve_claim_acquire() said, RESULT: this handle, null (held,
     * or the time is up), or the failure, thrown. */
    private function outcome(\FFI $ffi, $result): ?static
    {
        if (!Shim::isNull($result)) {
            return $this;
        }
        $errno = $ffi->__errno_location()[0];
        if ($errno === self::EWOULDBLOCK || $errno === self::ETIMEDOUT) {
            return null;
        }
        throw Shim::failure("acquire '" . Shim::cut($this->name) . "'");
    }

    /**
     * acquire($timeout) in a Fiber: try, and while another holds the name,
     * suspend the Fiber until the descriptor of swerve_claim_wait_fd()
     * is readable or the time is up, then try again (swerve_claim_wait_fd(3)).
     * The loop watches a copy of the descriptor (php://fd dups it), closed
     * before the next try or the release: the library closes its own there.
     */
    private function acquireSuspending(float $timeout, \Closure $waiter, \FFI $ffi, \FFI $waitFfi): ?static
    {
        $deadline = \hrtime(true) / 1e9 + $timeout;            // INF stays INF
        for (;;) {
            if (!Shim::isNull($ffi->swerve_claim_acquire($this->handle, 0.0))) {
                return $this;
            }
            $errno = $ffi->__errno_location()[0];
            if ($errno !== self::EWOULDBLOCK) {
                if ($errno === self::ETIMEDOUT) {              // the database, slow to answer
                    return null;
                }
                throw Shim::failure("acquire '" . Shim::cut($this->name) . "'");
            }
            $fd = $waitFfi->swerve_claim_wait_fd($this->handle);
            if ($fd < 0) {
                $e = Shim::failure("acquire '" . Shim::cut($this->name) . "': swerve_claim_wait_fd");
                $ffi->swerve_claim_release($this->handle);    // ends what may have begun
                throw $e;
            }
            $left = $deadline - \hrtime(true) / 1e9;
            if ($left <= 0.0) {
                $ffi->swerve_claim_release($this->handle);    // holds nothing: ends the wait
                return null;
            }
            // php://fd is the CLI's only: elsewhere, block for the time left.
            $stream = \PHP_SAPI === 'cli' ? @\fopen("php://fd/$fd", 'r') : false;
            if ($stream === false) {
                return $this->outcome($ffi, $ffi->swerve_claim_acquire($this->handle, $left));
            }
            $waited = false;
            try {
                $waiter($stream, $left, $fd);
                $waited = true;
            } finally {
                \fclose($stream);
                if (!$waited) {                                 // cancelled, or the loop failed
                    $ffi->swerve_claim_release($this->handle);
                }
            }
        }
    }

    /** Whether this handle holds the name: acquired and not released. */
    public function held(): bool
    {
        return Shim::ffi()->swerve_claim_held($this->handle) === 1;
    }

    /**
     * A fencing token for this hold of the name, 0 when nothing is held:
     * greater than every earlier hold's.  Send it with what the holder
     * writes elsewhere, and have that system refuse a smaller one than the
     * largest it has seen (swerve_claim_token(3)).
     */
    public function token(): int
    {
        return Shim::ffi()->swerve_claim_token($this->handle);
    }

    /** Give the claim up, so that another can take it. */
    public function release(): void
    {
        if (Shim::ffi()->swerve_claim_release($this->handle) !== 0) {
            throw Shim::failure("release '" . Shim::cut($this->name) . "'");
        }
    }

    /** No copies (clone is an Error): a copy would name the same C
     *  handle, and whichever went first would free it under the other. */
    private function __clone()
    {
    }

    /** Releases: synchronous. */
    public function __destruct()
    {
        if (!Shim::isNull($this->handle)) {
            Shim::ffi()->swerve_claim_free($this->handle);
            $this->handle = null;
        }
    }
}

/**
 * @internal How a Fiber waits for a stream to be readable, in the event
 * loop that runs it: the one given to Swerve::setWaiter(), else phasync's
 * while phasync::run() runs, else Revolt's when Revolt\EventLoop is loaded;
 * null: none known, acquire() blocks.
 */
final class Waiter
{
    public static ?\Closure $waiter = null;

    public static function find(): ?\Closure
    {
        if (self::$waiter !== null) {
            return self::$waiter;
        }
        if (\class_exists('phasync', false) && \phasync::isRunning()) {
            return self::phasync(...);
        }
        if (\class_exists('Revolt\EventLoop', false)) {
            return self::revolt(...);
        }
        return null;
    }

    /** phasync::readable($stream, $timeout) suspends the coroutine until
     *  the stream is readable, throwing phasync\TimeoutException when the
     *  time is up first (phasync.php, phasync::readable() and ::stream()). */
    private static function phasync($stream, float $timeout): void
    {
        try {
            \phasync::readable($stream, \min($timeout, \PHP_FLOAT_MAX));
        } catch (\phasync\TimeoutException) {
        }
    }

    /** Revolt: a Suspension of this Fiber, resumed by a reader on the
     *  stream or a timer, whichever is first; both cancelled before it
     *  returns or throws. */
    private static function revolt($stream, float $timeout): void
    {
        $suspension = \Revolt\EventLoop::getSuspension();
        $woken = false;
        $wake = static function () use (&$woken, $suspension): void {
            if (!$woken) {
                $woken = true;
                $suspension->resume();
            }
        };
        $reader = \Revolt\EventLoop::onReadable($stream, $wake);
        $timer = \is_finite($timeout) ? \Revolt\EventLoop::delay($timeout, $wake) : null;
        try {
            $suspension->suspend();
        } finally {
            \Revolt\EventLoop::cancel($reader);
            if ($timer !== null) {
                \Revolt\EventLoop::cancel($timer);
            }
        }
    }
}

final class Swerve
{
    /**
     * How acquire($timeout) waits inside a Fiber, for an event loop other
     * than phasync and Revolt (which it finds by itself); null: back to
     * those.  Returns the waiter set before.
     *
     * acquire() calls $waiter($stream, $secondsLeft, $fd) in the Fiber
     * that waits, with $stream a readable stream resource (a copy of the
     * descriptor $fd, which acquire() closes once the waiter is back),
     * and $secondsLeft > 0 (INF: no limit).  The waiter suspends the Fiber
     * until $stream is readable or $secondsLeft have passed, and stops
     * watching $stream (and $fd) before it returns or throws.  Returning
     * early is harmless: acquire() tries again, and waits again for the
     * time left.  What it throws (a cancellation) comes out of acquire(),
     * which has released the handle first: it holds nothing, and waits no
     * more.  For example, over stream_select() in a loop of one's own:
     *
     *     Swerve::setWaiter(fn ($stream, float $left) => $loop->readable($stream, $left));
     */
    public static function setWaiter(?callable $waiter): ?\Closure
    {
        $before = Waiter::$waiter;
        Waiter::$waiter = $waiter === null ? null : \Closure::fromCallable($waiter);
        return $before;
    }

    /** A handle on $name, a name one worker at a time can hold. */
    public static function claim(string $name): Claim
    {
        return new Claim($name);
    }

    /**
     * Whether this worker is being drained, its server stopping it
     * gracefully (php-fpm's reload or stop, Apache's graceful restart):
     * true once its master told it, it closed the listeners it inherited,
     * its master ended, or an operator ran `swerve-claim drain` on it
     * (swerve_claim_draining(3)).  Draining releases nothing: a long-lived
     * holder asks this now and then and releases its claim itself, so that
     * the reload does not wait for it.
     */
    public static function draining(): bool
    {
        $r = Shim::ffi()->swerve_claim_draining();
        if ($r < 0) {
            throw Shim::failure('draining');
        }
        return $r === 1;
    }
}
