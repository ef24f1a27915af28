<?php
// SPDX-License-Identifier: MIT
/* A minimal event loop of Fibers for the PHP binding's tests (neither
 * Revolt nor phasync is a Debian package): timers and readers over
 * stream_select(), callbacks run from the loop, and for Fibers go(),
 * sleep() and readable(), which suspend the calling Fiber.  run() is
 * bounded: 30 s and 100,000 turns at most, then it throws.  Its own
 * stand-ins for phasync and Revolt\EventLoop (fake_phasync.php,
 * fake_revolt.php) are built on it. */

final class FiberLoop
{
    public static ?FiberLoop $current = null;
    private int $next = 0;
    /** @var array<int, array{float, Closure}> */
    private array $timers = [];
    /** @var array<int, array{resource, Closure}> */
    private array $readers = [];
    /** @var list<Closure> */
    private array $queue = [];
    /** @var list<Fiber> every Fiber started, to tell when all have ended */
    private array $fibers = [];
    public int $turns = 0;
    /** the longest a turn took the loop away from its timers, in seconds */
    public float $longestStall = 0.0;

    public static function now(): float
    {
        return hrtime(true) / 1e9;
    }

    public function delay(float $seconds, Closure $callback): int
    {
        $this->timers[++$this->next] = [self::now() + $seconds, $callback];
        return $this->next;
    }

    public function onReadable($stream, Closure $callback): int
    {
        $this->readers[++$this->next] = [$stream, $callback];
        return $this->next;
    }

    public function queue(Closure $callback): void
    {
        $this->queue[] = $callback;
    }

    public function cancel(int $id): void
    {
        unset($this->timers[$id], $this->readers[$id]);
    }

    /** Starts FN in a Fiber of its own at once, as phasync::go() does. */
    public function go(Closure $fn): Fiber
    {
        $fiber = new Fiber($fn);
        $this->fibers[] = $fiber;
        $fiber->start();
        return $fiber;
    }

    /** Suspends the calling Fiber for SECONDS. */
    public function sleep(float $seconds): void
    {
        $fiber = Fiber::getCurrent() ?? throw new LogicException('sleep() outside a Fiber');
        $this->delay($seconds, static fn () => $fiber->resume());
        Fiber::suspend();
    }

    /** Suspends the calling Fiber until STREAM is readable (true) or TIMEOUT
     *  seconds have passed (false); it watches STREAM no more after. */
    public function readable($stream, float $timeout): bool
    {
        $fiber = Fiber::getCurrent() ?? throw new LogicException('readable() outside a Fiber');
        $reader = $this->onReadable($stream, static fn () => $fiber->resume(true));
        $timer = is_finite($timeout) ? $this->delay($timeout, static fn () => $fiber->resume(false)) : null;
        try {
            return Fiber::suspend();
        } finally {
            $this->cancel($reader);
            if ($timer !== null) {
                $this->cancel($timer);
            }
        }
    }

    /** Runs MAIN in a Fiber, then the loop until every Fiber has ended and
     *  nothing is left to wait for. */
    public function run(?Closure $main = null): void
    {
        $before = self::$current;
        self::$current = $this;
        try {
            if ($main !== null) {
                $this->go($main);
            }
            $end = self::now() + 30.0;
            while ($this->queue || $this->timers || $this->readers || $this->alive()) {
                if (++$this->turns > 100000 || self::now() > $end) {
                    throw new RuntimeException("the loop ran over: {$this->turns} turns");
                }
                $this->turn();
            }
        } finally {
            self::$current = $before;
        }
    }

    private function alive(): bool
    {
        $this->fibers = array_values(array_filter($this->fibers, fn (Fiber $f) => !$f->isTerminated()));
        if ($this->fibers && !$this->queue && !$this->timers && !$this->readers) {
            throw new RuntimeException(count($this->fibers) . ' Fiber(s) suspended with nothing to wake them');
        }
        return (bool)$this->fibers;
    }

    private function turn(): void
    {
        $queued = $this->queue;
        $this->queue = [];
        foreach ($queued as $callback) {
            $callback();
        }
        $wait = null;                                   // seconds; null: no timer
        foreach ($this->timers as [$at]) {
            $wait = min($wait ?? PHP_FLOAT_MAX, max(0.0, $at - self::now()));
        }
        if ($this->queue) {
            $wait = 0.0;
        }
        if ($this->readers) {
            $read = array_map(fn ($r) => $r[0], $this->readers);
            $write = $except = null;
            $sec = $wait === null ? null : (int)$wait;
            $usec = $wait === null ? null : (int)(($wait - (int)$wait) * 1e6);
            $n = @stream_select($read, $write, $except, $sec, $usec);
            if ($n === false) {
                throw new RuntimeException('stream_select failed: ' . (error_get_last()['message'] ?? '?'));
            }
            // In the order the readers were added: the first to wait goes first.
            foreach ($this->readers as $id => [$stream, $callback]) {
                if (in_array($stream, $read, true) && isset($this->readers[$id])) {
                    $callback();
                }
            }
        } elseif ($wait !== null) {
            usleep((int)($wait * 1e6));
        }
        $started = self::now();
        $due = array_filter($this->timers, fn ($t) => $t[0] <= self::now());
        uasort($due, fn ($a, $b) => $a[0] <=> $b[0]);
        foreach ($due as $id => [$at, $callback]) {
            if (isset($this->timers[$id])) {
                unset($this->timers[$id]);
                $this->longestStall = max($this->longestStall, $started - $at);
                $callback();
            }
        }
    }
}
