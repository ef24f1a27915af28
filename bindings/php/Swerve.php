<?php
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

    /** FFI gives a NULL pointer back as PHP null. */
    public static function isNull($pointer): bool
    {
        return $pointer === null || \FFI::isNull($pointer);
    }

    public static function failure(string $what): \RuntimeException
    {
        $ffi = self::ffi();
        $errno = $ffi->__errno_location()[0];
        return new \RuntimeException("$what: " . \FFI::string($ffi->strerror($errno)), $errno);
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
            throw Shim::failure("claim '$name'");
        }
        $this->name = $name;
    }

    /** Whether nobody holds the name now; nothing is claimed. */
    public function available(): bool
    {
        $r = Shim::ffi()->swerve_claim_available($this->handle);
        if ($r < 0) {
            throw Shim::failure("available '$this->name'");
        }
        return $r === 1;
    }

    /** Take the name, trying every 20 ms for up to $timeout seconds when
     *  another holds it; null when it is not taken. */
    public function acquire(float $timeout = 0.0): ?static
    {
        $ffi = Shim::ffi();
        if (!Shim::isNull($ffi->swerve_claim_acquire($this->handle, $timeout))) {
            return $this;
        }
        $errno = $ffi->__errno_location()[0];
        if ($errno === self::EWOULDBLOCK || $errno === self::ETIMEDOUT) {
            return null;
        }
        throw Shim::failure("acquire '$this->name'");
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
            throw Shim::failure("release '$this->name'");
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

final class Swerve
{
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
