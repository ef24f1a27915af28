<?php
// SPDX-License-Identifier: MIT
/* A stand-in for phasync (not a Debian package) over FiberLoop, with the
 * calls of phasync's API (phasync.php, github.com/phasync/phasync) that
 * the seed's examples and the binding use: run(), go(), sleep(),
 * readable() (throwing phasync\TimeoutException when the time is up),
 * isRunning().  The binding finds it as it finds phasync: the class
 * phasync is loaded, and phasync::isRunning(). */

namespace phasync {
    class TimeoutException extends \RuntimeException
    {
    }
}

namespace {
    require_once __DIR__ . '/fiber_loop.php';

    final class phasync
    {
        private static int $runDepth = 0;

        public static function run(Closure $fn): void
        {
            self::$runDepth++;
            try {
                (new FiberLoop())->run($fn);
            } finally {
                self::$runDepth--;
            }
        }

        public static function go(Closure $fn): Fiber
        {
            return FiberLoop::$current->go($fn);
        }

        public static function sleep(float $seconds = 0): void
        {
            FiberLoop::$current->sleep($seconds);
        }

        public static function readable(mixed $resource, ?float $timeout = null): mixed
        {
            stream_set_blocking($resource, false);          // as phasync::stream() does
            if (!FiberLoop::$current->readable($resource, $timeout ?? 30.0)) {
                throw new phasync\TimeoutException('Timeout');
            }
            return $resource;
        }

        public static function isRunning(): bool
        {
            return self::$runDepth > 0;
        }
    }
}
