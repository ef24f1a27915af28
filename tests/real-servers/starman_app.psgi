# A PSGI app for tests/real-servers/starman.sh: the seed's nightly-report
# pattern through the Perl binding (Swerve::Claim).
use strict;
use warnings;

use Swerve::Claim qw(claim);
use Time::HiRes ();

my $app = sub {
    my $env = shift;
    my $body;
    if ($env->{PATH_INFO} eq '/report') {    # ?seconds=N: how long the report takes (1.5)
        my ($seconds) = ($env->{QUERY_STRING} // '') =~ /seconds=([\d.]+)/;
        if (my $claim = claim('nightly-report')->acquire) {
            Time::HiRes::sleep($seconds // 1.5);    # the report, while holding the claim
            $body = "worker $$ runs the report\n";
        } else {
            $body = "worker $$: someone else is on it\n";
        }                                           # released as $claim goes
    } elsif ($env->{PATH_INFO} eq '/status') {
        $body = claim('nightly-report')->available ? 'free' : 'held';
    } else {
        $body = "$$\n";
    }
    return [ 200, [ 'Content-Type' => 'text/plain' ], [$body] ];
};
