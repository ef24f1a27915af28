#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# A Net::Server::PreFork server for tests/real-servers/netserver.sh that
# answers HTTP GETs (one a connection): the seed's nightly-report pattern
# through the Perl binding (Swerve::Claim) on /report, /status; /hold and
# /take, a leader that lets go once its child is drained (lib.sh's
# drain_check).  Its options come from the command line, Net::Server's
# --name=value, and a HUP re-execs it with the same ones.
use strict;
use warnings;

package ClaimServer;
use parent 'Net::Server::PreFork';

use Cwd ();
use Swerve::Claim qw(claim draining);
use Time::HiRes ();

sub now_ns { int(Time::HiRes::time() * 1e9) }

sub answer {
    my ($path, $query) = @_;
    if ($path eq '/report') {    # ?seconds=N: how long the report takes (1.5)
        my ($seconds) = $query =~ /seconds=([\d.]+)/;
        if (my $claim = claim('nightly-report')->acquire) {
            Time::HiRes::sleep($seconds // 1.5);    # the report, while holding the claim
            return "worker $$ runs the report\n";
        }
        return "worker $$: someone else is on it\n";    # released as $claim goes
    }
    if ($path eq '/hold') {    # the leader: lets go once its child drains
        my $leader = claim('leader')->acquire(5.0) or return "busy $$\n";
        my $told = '';
        # When the master told this child (Net::Server's child HUP handler,
        # which lets a connected child finish its request), for
        # drain_check: chained, not taken.
        my $hup = $SIG{HUP};
        local $SIG{HUP} = sub { $told ||= now_ns(); $hup->(@_) if ref $hup eq 'CODE' };
        for (1 .. 12000) {    # 60 s at most
            if (draining()) {
                my $seen = now_ns();
                $leader->release;
                return "drained $$ $seen $told\n";
            }
            Time::HiRes::sleep(0.005);
        }
        return "busy $$\n";
    }
    if ($path eq '/take') {
        return claim('leader')->acquire(5.0) ? "took $$\n" : "busy $$\n";
    }
    if ($path eq '/status') {
        return claim('nightly-report')->available ? 'free' : 'held';
    }
    return "$$\n";
}

sub process_request {
    my $self = shift;
    my ($line, $path, $query) = ('');
    my $ok = eval {
        local $SIG{ALRM} = sub { die "timeout\n" };
        alarm 10;    # a client that sends no request is let go
        $line = <STDIN> // '';
        while (defined(my $header = <STDIN>)) { last if $header =~ /^\r?\n$/ }
        alarm 0;
        1;
    };
    alarm 0;
    return unless $ok;
    ($path, $query) = $line =~ m{^GET\s+([^?\s]*)\??(\S*)} or return;
    my $body = answer($path, $query);
    print "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ", length($body),
        "\r\nConnection: close\r\n\r\n", $body;
}

package main;

my $server = ClaimServer->new;
# A HUP re-execs the master with this command line: perl itself, so that
# the script need not be executable, and LD_PRELOAD stays on perl.
$server->commandline([ $^X, Cwd::abs_path($0), @ARGV ]);
$server->run;
