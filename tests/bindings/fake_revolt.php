<?php
// SPDX-License-Identifier: MIT
/* A stand-in for Revolt's event loop (revolt/event-loop, not a Debian
 * package) over FiberLoop, with the calls of its API the binding uses:
 * EventLoop::getSuspension() (suspend(), resume(), throw()),
 * onReadable(), delay(), cancel(), queue() and run().  As Revolt's, a
 * Suspension is resumed from the loop, not from the callback, and
 * resuming one twice is an error. */

namespace Revolt\EventLoop {
    final class Suspension
    {
        private bool $pending = false;

        public function __construct(private \Fiber $fiber)
        {
        }

        public function suspend(): mixed
        {
            $this->pending = true;
            return \Fiber::suspend();
        }

        public function resume(mixed $value = null): void
        {
            $this->settle();
            \FiberLoop::$current->queue(fn () => $this->fiber->resume($value));
        }

        public function throw(\Throwable $throwable): void
        {
            $this->settle();
            \FiberLoop::$current->queue(fn () => $this->fiber->throw($throwable));
        }

        private function settle(): void
        {
            if (!$this->pending) {
                throw new \Error('Must call suspend() before calling resume()');
            }
            $this->pending = false;
        }
    }
}

namespace Revolt {
    require_once __DIR__ . '/fiber_loop.php';

    final class EventLoop
    {
        private static ?\FiberLoop $loop = null;

        private static function loop(): \FiberLoop
        {
            return \FiberLoop::$current ?? (self::$loop ??= new \FiberLoop());
        }

        public static function getSuspension(): EventLoop\Suspension
        {
            return new EventLoop\Suspension(\Fiber::getCurrent() ?? throw new \Error('no Fiber'));
        }

        public static function onReadable(mixed $stream, \Closure $closure): string
        {
            $id = null;
            $id = (string)self::loop()->onReadable($stream, function () use (&$id, $closure, $stream) {
                $closure($id, $stream);
            });
            return $id;
        }

        public static function delay(float $delay, \Closure $closure): string
        {
            $id = null;
            $id = (string)self::loop()->delay($delay, function () use (&$id, $closure) {
                self::loop()->cancel((int)$id);
                $closure($id);
            });
            return $id;
        }

        /** As Revolt's, the callback runs in a Fiber of its own. */
        public static function queue(\Closure $closure, mixed ...$args): void
        {
            $loop = self::loop();
            $loop->queue(fn () => $loop->go(fn () => $closure(...$args)));
        }

        public static function cancel(string $callbackId): void
        {
            self::loop()->cancel((int)$callbackId);
        }

        public static function run(?\Closure $main = null): void
        {
            (self::$loop ??= new \FiberLoop())->run($main);
        }
    }
}
