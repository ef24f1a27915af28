<?php
// SPDX-License-Identifier: MIT
/* The Swerve claim pages' examples over the PHP binding, printing what the
 * seed prints: the guide's phasync coroutines become worker processes,
 * and, as written, Fibers of one process (fibers-*), on a loop of the
 * tests' own (fiber_loop.php) behind phasync's API (fake_phasync.php),
 * Revolt's (fake_revolt.php) or Swerve::setWaiter().
 * usage: php -d ffi.enable=1 seed_examples.php EXAMPLE */

require __DIR__ . '/../../bindings/php/Swerve.php';

use Swerve\Swerve;

function reap(int $pid): void { pcntl_waitpid($pid, $status); }

/** How many descriptors this process has open. */
function open_fds(): int { return count(scandir('/proc/self/fd')) - 2; }

/** The guide's "Waiting for it", as written: two coroutines of one process. */
function guide_waiting_coroutines(): void
{
    phasync::go(function () {
        $claim = Swerve::claim('import')->acquire();
        echo "first: importing\n";
        phasync::sleep(0.2);
        echo "first: done\n";
    });                                      // released as $claim goes

    phasync::go(function () {
        echo "second: waiting\n";
        if ($claim = Swerve::claim('import')->acquire(timeout: 5.0)) {   // tries every 20 ms
            echo "second: importing\n";
        }
    });
}

// The guide's "Releasing", the same in a process and in a coroutine.
function guide_releasing(): void
{
    $claim = Swerve::claim('leader');
    $claim->acquire();
    echo 'held: ', var_export($claim->held(), true), "\n";
    $claim->release();                         // give it up while the handle lives on
    echo 'held: ', var_export($claim->held(), true), "\n";
    echo 'available: ', var_export($claim->available(), true), "\n";
    $claim->release();                         // releasing what is not held does nothing
}

$examples = [
    'guide-claims' => function () {
        [$ready_r, $ready_w] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, 0);
        [$finish_r, $finish_w] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, 0);
        $worker = function (string $who) use ($ready_w, $finish_r) {
            if ($claim = Swerve::claim('nightly-report')->acquire()) {
                echo "$who runs the report\n";
                fwrite($ready_w, 'x');
                fread($finish_r, 1);               // phasync::sleep(0.1)
            } else {
                echo "$who: someone else is on it\n";
            }
            exit(0);                               // $claim is released as the worker ends
        };
        $a = pcntl_fork();
        if ($a === 0) { $worker('a'); }
        fread($ready_r, 1);
        foreach (['b', 'c'] as $who) {
            $pid = pcntl_fork();
            if ($pid === 0) { $worker($who); }
            reap($pid);
        }
        fwrite($finish_w, 'x');
        reap($a);
        echo Swerve::claim('nightly-report')->available() ? "free again\n" : "still held\n";
    },
    'guide-waiting' => function () {
        $claim = Swerve::claim('import')->acquire();
        echo "first: importing\n";
        $pid = pcntl_fork();
        if ($pid === 0) {
            echo "second: waiting\n";
            if ($claim2 = Swerve::claim('import')->acquire(timeout: 5.0)) {   // tries every 20 ms
                echo "second: importing\n";
            }
            exit(0);
        }
        usleep(200000);
        echo "first: done\n";
        $claim = null;                             // released as $claim goes
        reap($pid);
    },
    'guide-releasing' => 'guide_releasing',
    'class-1' => function () {
        $mine  = Swerve::claim('import');
        $yours = Swerve::claim('import');          // two handles on one name conflict, also in one process
        var_dump($mine->available());              // nobody holds it; nothing is claimed
        var_dump($mine->acquire() === $mine);      // the handle, now holding it
        var_dump($yours->acquire());               // null: held by another
        var_dump($mine->held(), $yours->held());
        $mine->release();
        var_dump($yours->acquire() === $yours);
    },
    'class-2' => function () {
        (function () {
            if ($claim = Swerve::claim('nightly-report')->acquire()) {
                echo "report ran\n";
            }
        })();                                      // released when $claim goes out of scope
        echo 'released: ', var_export(Swerve::claim('nightly-report')->available(), true), "\n";
    },
    'class-3' => function () {
        $claim = Swerve::claim('import');
        if ($claim->acquire(timeout: 5.0)) {       // tries every 20 ms for up to 5 s
            echo "import_feed ran\n";
            $claim->release();
        }
        echo 'held: ', var_export($claim->held(), true), "\n";
    },
    'fencing-token' => function () {
        $claim = Swerve::claim('report');
        echo 'not held: ', $claim->token(), "\n";
        $claim->acquire();
        $first = $claim->token();
        echo 'held: ', $first > 0 ? 'positive' : $first, "\n";
        echo 'same while held: ', var_export($claim->token() === $first, true), "\n";
        $claim->release();
        echo 'after release: ', $claim->token(), "\n";
        $other = Swerve::claim('report');
        $other->acquire();
        echo 'next hold greater: ', var_export($other->token() > $first, true), "\n";
    },
    'draining' => function () {
        // A leader that lets go once it is drained: php-fpm's QUIT handler
        // closes the worker's listener, which the shim sees.  Here the
        // master's word down a pipe stands for that signal: PHP's own kill
        // (ext/posix, or libc's through FFI) is resolved past the shim's
        // hooks, as PHP loads its extensions RTLD_DEEPBIND.
        echo 'master: draining: ', var_export(Swerve::draining(), true), "\n";
        $listener = stream_socket_server('tcp://127.0.0.1:0');
        [$ready_r, $ready_w] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, 0);
        [$quit_r, $quit_w] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, 0);
        $pid = pcntl_fork();
        if ($pid === 0) {
            $leader = Swerve::claim('leader')->acquire();
            echo 'worker: leads, draining: ', var_export(Swerve::draining(), true), "\n";
            fwrite($ready_w, 'x');
            fread($quit_r, 1);
            fclose($listener);                      // as php-fpm's QUIT handler does
            for ($i = 0; $i < 1000 && !Swerve::draining(); $i++) {   // 5 s at most
                usleep(5000);
            }
            echo Swerve::draining() ? "worker: drained, lets go\n" : "worker: never drained\n";
            $leader->release();
            exit(0);
        }
        fread($ready_r, 1);
        fwrite($quit_w, 'q');
        echo Swerve::claim('leader')->acquire(timeout: 5.0) ? "master: leads\n" : "master: still held\n";
        reap($pid);
    },

    // The guide's three examples as written, Fibers of one process under
    // phasync's API (fake_phasync.php, over fiber_loop.php).
    'fibers-guide-claims' => function () {
        require_once __DIR__ . '/fake_phasync.php';
        phasync::run(function () {
            foreach (['a', 'b', 'c'] as $who) {
                phasync::go(function () use ($who) {
                    if ($claim = Swerve::claim('nightly-report')->acquire()) {
                        echo "$who runs the report\n";
                        phasync::sleep(0.1);
                    } else {
                        echo "$who: someone else is on it\n";
                    }
                });                                   // $claim is released when it goes out of scope
            }
        });                                           // run() returns once its coroutines have
        echo Swerve::claim('nightly-report')->available() ? "free again\n" : "still held\n";
    },
    'fibers-guide-waiting' => function () {
        require_once __DIR__ . '/fake_phasync.php';
        phasync::run(guide_waiting_coroutines(...));
    },
    'fibers-guide-releasing' => function () {
        require_once __DIR__ . '/fake_phasync.php';
        phasync::run(guide_releasing(...));
    },
    // "Waiting for it" under Revolt's API (Amp's loop): each coroutine a
    // callback of the loop, which runs it in a Fiber; sleeping is a
    // Suspension resumed by a timer.
    'fibers-guide-waiting-revolt' => function () {
        require_once __DIR__ . '/fake_revolt.php';
        $sleep = function (float $seconds): void {
            $suspension = Revolt\EventLoop::getSuspension();
            Revolt\EventLoop::delay($seconds, fn () => $suspension->resume());
            $suspension->suspend();
        };
        Revolt\EventLoop::queue(function () use ($sleep) {
            $claim = Swerve::claim('import')->acquire();
            echo "first: importing\n";
            $sleep(0.2);
            echo "first: done\n";
        });
        Revolt\EventLoop::queue(function () {
            echo "second: waiting\n";
            if ($claim = Swerve::claim('import')->acquire(timeout: 5.0)) {
                echo "second: importing\n";
            }
        });
        Revolt\EventLoop::run();
    },
    // "Waiting for it" on a loop the binding does not know, plugged in
    // through Swerve::setWaiter().
    'fibers-guide-waiting-hook' => function () {
        require_once __DIR__ . '/fiber_loop.php';
        $loop = new FiberLoop();
        Swerve::setWaiter(fn ($stream, float $left) => $loop->readable($stream, $left));
        $loop->run(function () use ($loop) {
            $loop->go(function () use ($loop) {
                $claim = Swerve::claim('import')->acquire();
                echo "first: importing\n";
                $loop->sleep(0.2);
                echo "first: done\n";
            });
            $loop->go(function () {
                echo "second: waiting\n";
                if ($claim = Swerve::claim('import')->acquire(timeout: 5.0)) {
                    echo "second: importing\n";
                }
            });
        });
    },
    // "Waiting for it" with the first a process of its own (a second php,
    // started by proc_open: pcntl may be absent), which releases the name
    // once this one has said "first: done", and ends only after it.
    'fibers-guide-waiting-process' => function () {
        require_once __DIR__ . '/fake_phasync.php';
        $holder = proc_open([PHP_BINARY, '-n', '-d', 'extension=ffi', '-d', 'ffi.enable=1', __FILE__, 'holder'],
                            [0 => ['pipe', 'r'], 1 => ['pipe', 'w']], $pipes);
        phasync::run(function () use ($pipes) {
            if (fgets($pipes[1]) !== "importing\n") {           // it holds the name
                throw new RuntimeException('the holder did not start');
            }
            echo "first: importing\n";
            phasync::go(function () use ($pipes) {
                if (fgets(phasync::readable($pipes[1], 5.0)) !== "done\n") {
                    throw new RuntimeException('the holder did not finish');
                }
                echo "first: done\n";
                fwrite($pipes[0], "release\n");
            });
            phasync::go(function () {
                echo "second: waiting\n";
                if ($claim = Swerve::claim('import')->acquire(timeout: 5.0)) {
                    echo "second: importing\n";
                }
            });
        });
        fclose($pipes[0]);
        fclose($pipes[1]);
        if (($status = proc_close($holder)) !== 0) {
            throw new RuntimeException("the holder ended with status $status");
        }
    },
    'holder' => function () {
        $claim = Swerve::claim('import')->acquire();
        echo $claim ? "importing\n" : "not held\n";
        usleep(200000);
        echo "done\n";
        if (fgets(STDIN) === "release\n") {
            $claim->release();                      // the release, not its end, wakes the waiter
        }
        stream_get_contents(STDIN);                 // until the other closes the pipe
    },
    // A waiter whose time is up gives up while the loop runs on, and holds
    // nothing, and no descriptor, after.
    'fibers-timeout' => function () {
        require_once __DIR__ . '/fake_phasync.php';
        phasync::run(function () {
            $ticks = 0;
            phasync::go(function () {
                $claim = Swerve::claim('import')->acquire();
                phasync::sleep(1.0);
            });
            phasync::go(function () use (&$ticks) {
                for ($i = 0; $i < 20; $i++) {         // 1 s of ticks
                    phasync::sleep(0.05);
                    $ticks++;
                }
            });
            phasync::go(function () use (&$ticks) {
                $fds = open_fds();
                $claim = Swerve::claim('import');
                $started = hrtime(true);
                $got = $claim->acquire(timeout: 0.3);
                $waited = (hrtime(true) - $started) / 1e9;
                echo 'second: ', $got ? 'importing' : 'gave up', "\n";
                echo 'waited 0.3 s: ', var_export($waited >= 0.29 && $waited < 1.0, true), "\n";
                echo 'ticks meanwhile: ', var_export($ticks >= 3, true), "\n";
                echo 'held: ', var_export($claim->held(), true), "\n";
                $claim = null;
                echo 'descriptors as before: ', var_export(open_fds() === $fds, true), "\n";
            });
        });
        echo 'available: ', var_export(Swerve::claim('import')->available(), true), "\n";
    },
    // A waiter cancelled (an exception thrown into its Fiber) stops
    // waiting: it holds nothing, keeps no descriptor, and does not take
    // the name once it is free.
    'fibers-cancel' => function () {
        require_once __DIR__ . '/fake_phasync.php';
        phasync::run(function () {
            phasync::go(function () {
                $claim = Swerve::claim('import')->acquire();
                phasync::sleep(0.4);
            });
            $handle = Swerve::claim('import');
            $fds = open_fds();
            $second = phasync::go(function () use ($handle) {
                try {
                    $handle->acquire(timeout: 5.0);
                    echo "second: importing\n";
                } catch (RuntimeException $e) {
                    echo 'second: ', $e->getMessage(), "\n";
                }
            });
            phasync::go(function () use ($second, $handle, $fds) {
                phasync::sleep(0.1);
                $second->throw(new RuntimeException('cancelled'));
                echo 'held: ', var_export($handle->held(), true), "\n";
                echo 'descriptors as before: ', var_export(open_fds() === $fds, true), "\n";
                phasync::sleep(0.5);                       // the first has let go
                echo 'held after: ', var_export($handle->held(), true), "\n";
                echo 'available after: ', var_export($handle->available(), true), "\n";
            });
        });
    },
];

try {
    $examples[$argv[1]]();
} catch (\Swerve\ShimNotLoaded $e) {
    fwrite(STDERR, "seed_examples.php: " . $e->getMessage() . "\n");
    exit(2);
}
