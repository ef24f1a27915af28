<?php
// SPDX-License-Identifier: MIT
/* For tests/real-servers/php-fpm.sh, apache.sh, lighttpd.sh and
 * daemon-mode.sh: the seed's nightly-report pattern through the PHP
 * binding.  ?seconds=N: how long the report takes (1.5); ?status: whether
 * nightly-report is free; ?hold and ?take, a leader that lets go once its
 * worker is drained (lib.sh's drain_check).  Where the server gives the
 * request SCL_DRAIN_OUT (lighttpd.sh: its graceful restart cuts the
 * request off before the backend is told), ?hold also writes its answer
 * to that file. */
require __DIR__ . '/Swerve.php';

use Swerve\Swerve;

parse_str($_SERVER['QUERY_STRING'] ?? '', $query);
if (isset($query['hold'])) {
    $leader = Swerve::claim('leader')->acquire(5.0);
    $answer = 'busy ' . getmypid() . "\n";
    for ($i = 0; $leader && $i < 12000; $i++) {       // 60 s at most
        if (Swerve::draining()) {
            $now = gettimeofday();
            $leader->release();
            $answer = 'drained ' . getmypid() . ' ' . ($now['sec'] * 1000000000 + $now['usec'] * 1000) . "\n";
            if (isset($_SERVER['SCL_DRAIN_OUT'])) {
                file_put_contents($_SERVER['SCL_DRAIN_OUT'], $answer);
            }
            break;
        }
        usleep(5000);
    }
    echo $answer;
} elseif (isset($query['take'])) {
    echo Swerve::claim('leader')->acquire(5.0) ? 'took ' : 'busy ', getmypid(), "\n";
} elseif (isset($query['status'])) {
    echo Swerve::claim('nightly-report')->available() ? 'free' : 'held';
} elseif ($claim = Swerve::claim('nightly-report')->acquire()) {
    usleep((int)(((float)($query['seconds'] ?? 1.5)) * 1e6));
    echo 'worker ', getmypid(), " runs the report\n";
} else {
    echo 'worker ', getmypid(), ": someone else is on it\n";
}
