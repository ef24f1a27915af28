# SPDX-License-Identifier: MIT
# The Swerve claim pages' examples over the Perl binding, printing what the
# seed prints (the guide's coroutines become worker processes, and
# guide-waiting-coroutines is "Waiting for it" as Mojo::IOLoop coroutines
# in one process; a claim that goes out of scope is released by its
# DESTROY, a guard's scope is Python's with block).
# usage: perl -I bindings/perl seed_examples.pl EXAMPLE
use strict;
use warnings;

use POSIX ();
use Swerve::Claim qw(claim draining);
use Time::HiRes ();

$| = 1;

sub dump_bool { return 'bool(' . ($_[0] ? 'true' : 'false') . ')' }
sub tf        { return $_[0] ? 'true' : 'false' }

my %examples = (
    'guide-claims' => sub {
        pipe(my $ready_r, my $ready_w) or die "pipe: $!";
        pipe(my $finish_r, my $finish_w) or die "pipe: $!";
        $ready_w->autoflush(1);
        $finish_w->autoflush(1);
        my $racer = sub {
            my ($who) = @_;
            if (my $c = claim('nightly-report')->acquire) {
                print "$who runs the report\n";
                syswrite $ready_w, 'x';
                sysread $finish_r, my $byte, 1;    # phasync::sleep(0.1)
            } else {
                print "$who: someone else is on it\n";
            }
            POSIX::_exit(0);                       # the claim is released as the worker ends
        };
        my $a = fork // die "fork: $!";
        $racer->('a') if $a == 0;
        sysread $ready_r, my $byte, 1;
        for my $who ('b', 'c') {
            my $pid = fork // die "fork: $!";
            $racer->($who) if $pid == 0;
            waitpid $pid, 0;
        }
        syswrite $finish_w, 'x';
        waitpid $a, 0;
        print claim('nightly-report')->available ? "free again\n" : "still held\n";
    },
    'guide-waiting' => sub {
        my $first = claim('import')->acquire;
        print "first: importing\n";
        my $pid = fork // die "fork: $!";
        if ($pid == 0) {
            print "second: waiting\n";
            print "second: importing\n" if claim('import')->acquire(5.0);    # tries every 20 ms
            POSIX::_exit(0);
        }
        Time::HiRes::sleep(0.2);
        print "first: done\n";
        undef $first;                              # released as $first goes
        waitpid $pid, 0;
    },
    # The same as the seed writes it: two coroutines in one process, here
    # Mojo::IOLoop's (promise chains); the second waits through acquire_p,
    # whose descriptor lets the loop run the first meanwhile.
    'guide-waiting-coroutines' => sub {
        require Mojo::Promise;
        my $first = Mojo::Promise->resolve->then(sub {
            my $claim = claim('import')->acquire;
            print "first: importing\n";
            return Mojo::Promise->timer(0.2)->then(sub {
                print "first: done\n";
                undef $claim;                      # released as $claim goes
            });
        });
        my $second = Mojo::Promise->resolve->then(sub {
            print "second: waiting\n";
            return claim('import')->acquire_p(5.0)->then(sub {    # waits on the claim's descriptor
                my ($claim) = @_;
                print "second: importing\n" if $claim;
            });
        });
        my $error;
        Mojo::Promise->all($first, $second)->catch(sub { $error = shift })->wait;
        die $error if defined $error;
    },
    'guide-releasing' => sub {
        my $c = claim('leader');
        $c->acquire;
        print 'held: ', tf($c->held), "\n";
        $c->release;                               # give it up while the handle lives on
        print 'held: ', tf($c->held), "\n";
        print 'available: ', tf($c->available), "\n";
        $c->release;                               # releasing what is not held does nothing
    },
    'class-1' => sub {
        my $mine  = claim('import');
        my $yours = claim('import');               # two handles on one name conflict, also in one process
        print dump_bool($mine->available), "\n";
        print dump_bool($mine->acquire == $mine), "\n";
        print defined $yours->acquire ? "handle\n" : "NULL\n";
        print dump_bool($mine->held), "\n", dump_bool($yours->held), "\n";
        $mine->release;
        print dump_bool($yours->acquire == $yours), "\n";
    },
    'class-2' => sub {
        {
            my $c = claim('nightly-report')->acquire;
            print "report ran\n" if $c;
        }                                          # released when $c goes out of scope
        print 'released: ', tf(claim('nightly-report')->available), "\n";
    },
    'class-3' => sub {
        my $c = claim('import');
        if ($c->acquire(5.0)) {                    # tries every 20 ms for up to 5 s
            print "import_feed ran\n";
            $c->release;
        }
        print 'held: ', tf($c->held), "\n";
    },
    'context-manager' => sub {
        my $cron = claim('cron');
        {
            my $held = $cron->guard;
            print $held ? "inside: held\n" : "inside: not held\n";
            my $again = claim('cron')->guard;
            print 'nested: ', ($again ? 'held' : 'someone else is on it'), "\n";
        }                                          # the guard releases it here
        print 'after: ', (claim('cron')->available ? 'free' : 'held'), "\n";
    },
    'fencing-token' => sub {
        my $c = claim('report');
        print 'not held: ', $c->token, "\n";
        $c->acquire;
        my $first = $c->token;
        print 'held: ', ($first > 0 ? 'positive' : $first), "\n";
        print 'same while held: ', tf($c->token == $first), "\n";
        $c->release;
        print 'after release: ', $c->token, "\n";
        my $other = claim('report');
        $other->acquire;
        print 'next hold greater: ', tf($other->token > $first), "\n";
    },
    # A leader that lets go once its master drains it (the guide's
    # Swerve::draining()): the master's graceful SIGTERM, as gunicorn's.
    'draining' => sub {
        print 'master: draining: ', tf(draining()), "\n";
        pipe(my $ready_r, my $ready_w) or die "pipe: $!";
        $ready_w->autoflush(1);
        my $pid = fork // die "fork: $!";
        if ($pid == 0) {
            local $SIG{TERM} = sub { };    # the worker's own graceful handler
            my $leader = claim('leader')->acquire;
            print 'worker: leads, draining: ', tf(draining()), "\n";
            syswrite $ready_w, 'x';
            for (1 .. 1000) {              # 5 s at most
                last if draining();
                Time::HiRes::sleep(0.005);
            }
            print draining() ? "worker: drained, lets go\n" : "worker: never drained\n";
            $leader->release;
            POSIX::_exit(0);
        }
        sysread $ready_r, my $byte, 1;
        kill 'TERM', $pid;
        print claim('leader')->acquire(5.0) ? "master: leads\n" : "master: still held\n";
        waitpid $pid, 0;
    },
);

my $example = $examples{ $ARGV[0] // '' } or die "usage: seed_examples.pl EXAMPLE\n";
if (!eval { $example->(); 1 }) {
    die $@ unless ref $@ && $@->isa('Swerve::Claim::ShimNotLoaded');
    print STDERR "seed_examples.pl: $@";
    exit 2;
}
