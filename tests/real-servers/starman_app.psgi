# SPDX-License-Identifier: MIT
# A PSGI app for tests/real-servers/starman.sh: the seed's nightly-report
# pattern through the Perl binding (Swerve::Claim); /hold and /take, a
# leader that lets go once its worker is drained (lib.sh's drain_check).
use strict;
use warnings;

use Swerve::Claim qw(claim draining);
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
    } elsif ($env->{PATH_INFO} eq '/hold') {    # the leader: lets go once its worker drains
        my $leader = claim('leader')->acquire(5.0);
        my $told = '';
        # When the master told this worker (Net::Server's HUP handler, which
        # lets it finish its request), for drain_check: chained, not taken.
        my $hup = $SIG{HUP};
        local $SIG{HUP} = sub { $told ||= int(Time::HiRes::time() * 1e9); $hup->(@_) if ref $hup eq 'CODE' };
        $body = "busy $$\n";
        for (1 .. ($leader ? 12000 : 0)) {    # 60 s at most
            if (draining()) {
                my $seen = int(Time::HiRes::time() * 1e9);
                $leader->release;
                $body = "drained $$ $seen $told\n";
                last;
            }
            Time::HiRes::sleep(0.005);
        }
    } elsif ($env->{PATH_INFO} eq '/take') {
        $body = claim('leader')->acquire(5.0) ? "took $$\n" : "busy $$\n";
    } elsif ($env->{PATH_INFO} eq '/status') {
        $body = claim('nightly-report')->available ? 'free' : 'held';
    } else {
        $body = "$$\n";
    }
    return [ 200, [ 'Content-Type' => 'text/plain' ], [$body] ];
};
