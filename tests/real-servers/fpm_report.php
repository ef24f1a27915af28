<?php
/* For tests/real-servers/php-fpm.sh: the seed's nightly-report pattern through
 * the PHP binding.  ?seconds=N: how long the report takes (1.5);
 * ?status: whether nightly-report is free. */
require __DIR__ . '/Swerve.php';

use Swerve\Swerve;

parse_str($_SERVER['QUERY_STRING'] ?? '', $query);
if (isset($query['status'])) {
    echo Swerve::claim('nightly-report')->available() ? 'free' : 'held';
} elseif ($claim = Swerve::claim('nightly-report')->acquire()) {
    usleep((int)(((float)($query['seconds'] ?? 1.5)) * 1e6));
    echo 'worker ', getmypid(), " runs the report\n";
} else {
    echo 'worker ', getmypid(), ": someone else is on it\n";
}
