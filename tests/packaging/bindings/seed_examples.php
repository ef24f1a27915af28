<?php
/* The Swerve claim pages' examples over the PHP binding, printing what the
 * seed prints (the guide's phasync coroutines become worker processes).
 * usage: php -d ffi.enable=1 seed_examples.php EXAMPLE */

require __DIR__ . '/../../../bindings/php/Swerve.php';

use Swerve\Swerve;

function reap(int $pid): void { pcntl_waitpid($pid, $status); }

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
    'guide-releasing' => function () {
        $claim = Swerve::claim('leader');
        $claim->acquire();
        echo 'held: ', var_export($claim->held(), true), "\n";
        $claim->release();                         // give it up while the handle lives on
        echo 'held: ', var_export($claim->held(), true), "\n";
        echo 'available: ', var_export($claim->available(), true), "\n";
        $claim->release();                         // releasing what is not held does nothing
    },
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
];

try {
    $examples[$argv[1]]();
} catch (\Swerve\ShimNotLoaded $e) {
    fwrite(STDERR, "seed_examples.php: " . $e->getMessage() . "\n");
    exit(2);
}
