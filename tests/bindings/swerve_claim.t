# SPDX-License-Identifier: MIT
# The Perl binding (bindings/perl/Swerve/Claim.pm) under the shim, with
# Test::More: run by tests/bindings/perl.sh, which preloads the shim into
# this perl and gives it SWERVE_TMPDIR.
use strict;
use warnings;

use Errno qw(EALREADY EBUSY EINVAL ENAMETOOLONG ENOENT);
use File::Basename qw(dirname);
use File::Spec;
use File::Temp qw(tempdir);
use IPC::Open3 qw(open3);
use List::Util qw(max);
use POSIX ();
use Symbol qw(gensym);
use Test::More;
# AnyEvent on its own loop, not on IO::Async's, which this test loads too.
BEGIN { $ENV{PERL_ANYEVENT_MODEL} = 'Perl' }
use Time::HiRes qw(time sleep);

use Swerve::Claim qw(claim);

my $here     = File::Spec->rel2abs(dirname(__FILE__));
my $expected = "$here/expected";
my $binding  = "$here/../../bindings/perl";

# Runs COMMAND... with %ENV changed by ENV, under a timeout of 30 s that is
# not preloaded itself; with LD_PRELOAD as this process has it unless ENV
# gives it as undef: its standard output, standard error and exit status.
sub run_with {
    my ($env, @command) = @_;
    my $shim = !exists $env->{LD_PRELOAD};
    local %ENV = %ENV;
    my @preload = $shim ? ('env', "LD_PRELOAD=$ENV{LD_PRELOAD}") : ();
    delete $ENV{LD_PRELOAD};
    $ENV{$_} = $env->{$_} for grep { defined $env->{$_} } keys %$env;
    my $err = gensym;
    my $pid = open3(my $in, my $out, $err, 'timeout', '30', @preload, @command);
    close $in;
    my $stdout = do { local $/; <$out> } // '';
    my $stderr = do { local $/; <$err> } // '';
    waitpid $pid, 0;
    return ($stdout, $stderr, $? >> 8);
}

sub slurp {
    open my $fh, '<', $_[0] or die "$_[0]: $!";
    local $/;
    return <$fh>;
}

# Forks a child that runs CODE and exits 0 when it returns true.
sub in_child {
    my ($code) = @_;
    my $pid = fork // die "fork: $!";
    POSIX::_exit($code->() ? 0 : 1) if $pid == 0;
    waitpid $pid, 0;
    return $? == 0;
}

# --------------------------------------------------- the seed's examples

# Each example of the Swerve claim pages prints what the pages say, writes
# nothing to standard error and leaves no claim directory in its base.
# guide-waiting-coroutines is "Waiting for it" as the seed writes it, two
# Mojo::IOLoop coroutines in one process.
for my $example (
    qw(guide-claims guide-waiting guide-waiting-coroutines guide-releasing class-1 class-2 class-3 context-manager
    fencing-token draining))
{
    my $base = tempdir(CLEANUP => 1);
    my ($out, $err, $status) =
        run_with({ SWERVE_TMPDIR => $base }, $^X, "-I$binding", "$here/seed_examples.pl", $example);
    (my $prints = $example) =~ s/-coroutines$//;
    subtest "seed example $example" => sub {
        is($status, 0, 'exit status 0');
        is($out, slurp("$expected/$prints.txt"), "prints what the seed prints");
        is($err, '', 'nothing on standard error');
        opendir my $dh, $base or die "$base: $!";
        is_deeply([ grep { !/^\.\.?$/ } readdir $dh ], [], 'no claim directory left');
    };
}

# -------------------------------------------------------------- handles

subtest 'two handles conflict in one process' => sub {
    my $mine  = claim('conflict');
    my $yours = claim('conflict');
    ok($mine->available, 'available');
    is($mine->acquire, $mine, 'acquire returns the handle');
    is($yours->acquire, undef, 'the other handle gets undef');
    ok(!$mine->available && !$yours->available, 'neither sees it available');
    ok($mine->held, 'mine holds it');
    ok(!$yours->held, 'yours does not');
    is($mine->acquire, $mine, 'acquiring it again while holding it');
    $mine->release;
    is($yours->acquire, $yours, 'yours takes it once released');
};

subtest 'release when nothing is held does nothing' => sub {
    my $c = claim('idle');
    $c->release;
    $c->acquire;
    $c->release;
    $c->release;
    ok(!$c->held, 'not held');
    ok($c->available, 'available');
};

subtest 'acquire with a timeout waits, then takes it' => sub {
    my $holder = claim('wait-for-it')->acquire;
    pipe(my $r, my $w) or die "pipe: $!";
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        my $c = claim('wait-for-it');
        syswrite $w, 'x';
        my $started = time;
        my $got     = $c->acquire(5.0);
        my $waited  = time - $started;
        POSIX::_exit(defined $got && $got == $c && $waited >= 0.2 && $waited < 4 ? 0 : 1);
    }
    sysread $r, my $byte, 1;
    sleep 0.3;
    $holder->release;
    waitpid $pid, 0;
    is($?, 0, 'the waiting child took the name once released');
};

subtest 'acquire gives up after its timeout' => sub {
    my $holder  = claim('busy')->acquire;
    my $started = time;
    is(claim('busy')->acquire(0.15), undef, 'undef');
    cmp_ok(time - $started, '>=', 0.14, 'after the timeout');
    ok($holder->held, 'the holder still holds it');
};

subtest 'token' => sub {
    my $c = claim('fence');
    is($c->token, 0, '0 when nothing is held');
    $c->acquire;
    my $first = $c->token;
    cmp_ok($first, '>', 0, 'positive when held');
    $c->release;
    my $other = claim('fence')->acquire;
    cmp_ok($other->token, '>', $first, 'the next hold is greater');
};

# --------------------------------------------------------------- guards

subtest 'a handle that goes out of scope is released' => sub {
    {
        my $c = claim('scoped')->acquire;
        ok(!claim('scoped')->available, 'held in its scope');
    }
    ok(claim('scoped')->available, 'free after it');
};

subtest 'a guard holds for its scope' => sub {
    my $c = claim('guarded');
    {
        my $guard = $c->guard;
        ok($guard, 'a guard when free');
        is($guard->claim, $c, 'of the handle');
        ok($c->held, 'held');
        is(claim('guarded')->guard, undef, 'undef when busy');
    }
    ok(!$c->held, 'released at the end of its scope');
    ok(claim('guarded')->available, 'available');
};

subtest 'a guard releases when a die leaves its scope' => sub {
    my $c  = claim('boom');
    my $ok = eval {
        my $guard = $c->guard or die "not taken\n";
        die "boom\n";
    };
    is($@, "boom\n", 'the die passes through, its message intact');
    ok(!$c->held, 'released');
    ok(claim('boom')->available, 'available');
    is($c->acquire, $c, 'the handle lives on');
};

# --------------------------------------------------------------- errors

subtest 'a name with a NUL byte is refused' => sub {
    ok(!eval { claim("a\0b"); 1 }, 'dies');
    like($@, qr/NUL byte/, 'and says why');
    ok(!eval { Swerve::Claim->new(undef); 1 }, 'undef dies too');
};

subtest 'system errors die with errno and its message' => sub {
    ok(!eval { claim(''); 1 }, 'an empty name dies');
    isa_ok($@, 'Swerve::Claim::Error');
    is($@->errno, EINVAL, 'EINVAL');
    local $! = EINVAL;
    is("$@", "claim '': a claim's name must not be empty: $!\n", 'the message says why, and strerror');
    ok(!eval { claim('x' x 4097); 1 }, 'a name too long dies');
    is($@->errno, ENAMETOOLONG, 'ENAMETOOLONG');
    ok(!eval { claim('negative')->acquire(-1); 1 }, 'a negative timeout dies');
    is($@->errno, EINVAL, 'EINVAL');
};

# #41: the error names what is wrong (the missing base), and a 4 KB name
# is cut to its first 64 characters and "..." (it was echoed whole).
subtest 'an error names the missing base and cuts a long name' => sub {
    my $missing = '/nonexistent/scl-why-base';
    my ($out, $err, $status) = run_with({ SWERVE_TMPDIR => $missing }, $^X, "-I$binding", '-MSwerve::Claim', '-e',
        'eval { Swerve::Claim->new("n" x 4096)->acquire }; print ref $@, " ", $@->errno, "\n", $@');
    is($status, 0, 'the script runs') or diag $err;
    is( $out,
        "Swerve::Claim::Error " . ENOENT . "\nacquire '"
            . ('n' x 64)
            . "\xe2\x80\xa6': cannot open $missing for claim directories: No such file or directory (ENOENT)\n",
        'the path, the cut name');
};

subtest 'without the shim' => sub {
    my ($out, $err, $status) = run_with({ LD_PRELOAD => undef }, $^X, "-I$binding", '-MSwerve::Claim', '-e',
        'eval { Swerve::Claim->new("x") }; print ref $@, "\n", $@');
    is($status, 0, 'the script runs');
    is( $out,
        "Swerve::Claim::ShimNotLoaded\nlibswerveclaim_preload.so is not loaded: "
            . "run under LD_PRELOAD=libswerveclaim_preload.so (or swerve-claim-preload)\n",
        'Swerve::Claim::ShimNotLoaded, which says what to do');
    ($out, $err, $status) = run_with({ LD_PRELOAD => undef }, $^X, "-I$binding", "$here/seed_examples.pl", 'class-1');
    is($status, 2, 'the seed examples exit 2');
    like($err, qr/libswerveclaim_preload.so is not loaded/, 'and say why');
};

# ----------------------------------------------------- the handle's life

subtest 'a forked child holds nothing of its parent' => sub {
    my $c = claim('inherited')->acquire;
    ok(in_child(sub { !$c->held && $c->token == 0 && !defined $c->acquire }), 'not held in the child');
    # A normal exit: the child's copy is destroyed, which holds nothing.
    my $pid = fork // die "fork: $!";
    exit 0 if $pid == 0;
    waitpid $pid, 0;
    ok($c->held, 'still held by the parent');
    ok(!claim('inherited')->available, 'not available');
};

# ------------------------------------------------------- in event loops

# The protocol of wait_fd (swerve_claim_wait_fd(3)) in Mojo::IOLoop,
# IO::Async and AnyEvent: try acquire(0); on undef watch wait_fd for
# reading, and on readable stop watching and try again.  Each loop is an
# adapter: timer(AFTER, CB), ticker(CB) every 10 ms, watch(FD, CB) ->
# WATCH, unwatch(WATCH), run, stop.  Mojo::IOLoop's and IO::Async's
# watchers need a Perl handle: a copy (dup) of the descriptor, closed as
# it is unwatched, never the library's own (a handle closes its
# descriptor as it goes); AnyEvent takes the number itself.
my %loops = (
    'Mojo::IOLoop' => sub {
        require Mojo::IOLoop;
        my $loop = Mojo::IOLoop->new;
        return {
            timer => sub { my ($after, $cb) = @_; my $id = $loop->timer($after => $cb); sub { $loop->remove($id) } },
            ticker => sub { my $id = $loop->recurring(0.01 => $_[0]); sub { $loop->remove($id) } },
            watch => sub {
                my ($fd, $cb) = @_;
                open(my $fh, '<&', $fd) or die "dup $fd: $!";
                $loop->reactor->io($fh => $cb)->watch($fh, 1, 0);
                return $fh;
            },
            unwatch => sub { $loop->reactor->remove($_[0]); close $_[0] },
            run     => sub { $loop->start },
            stop    => sub { $loop->stop },
        };
    },
    'IO::Async::Loop' => sub {
        require IO::Async::Loop;
        require IO::Async::Timer::Periodic;
        my $loop = IO::Async::Loop->new;
        return {
            timer => sub { my ($after, $cb) = @_; my $id = $loop->watch_time(after => $after, code => $cb); sub { $loop->unwatch_time($id) } },
            ticker => sub {
                my $timer = IO::Async::Timer::Periodic->new(interval => 0.01, on_tick => $_[0]);
                $loop->add($timer);
                $timer->start;
                sub { $timer->stop; $loop->remove($timer) };
            },
            watch => sub {
                my ($fd, $cb) = @_;
                open(my $fh, '<&', $fd) or die "dup $fd: $!";
                $loop->watch_io(handle => $fh, on_read_ready => $cb);
                return $fh;
            },
            unwatch => sub { $loop->unwatch_io(handle => $_[0], on_read_ready => 1); close $_[0] },
            run     => sub { $loop->run },
            stop    => sub { $loop->stop },
        };
    },
    'AnyEvent' => sub {
        require AnyEvent;
        my $cv;
        return {
            timer => sub {    # (kept until it fires or is cancelled: a dropped watcher never fires)
                my ($after, $cb) = @_;
                my $w;
                AnyEvent->now_update;    # its clock stood still since it last ran
                $w = AnyEvent->timer(after => $after, cb => sub { undef $w; $cb->() });
                sub { undef $w };
            },
            ticker => sub {
                AnyEvent->now_update;
                my $w = AnyEvent->timer(after => 0.01, interval => 0.01, cb => $_[0]);
                sub { undef $w };
            },
            watch   => sub { my ($fd, $cb) = @_; return [ AnyEvent->io(fh => $fd, poll => 'r', cb => $cb) ] },
            unwatch => sub { @{ $_[0] } = () },
            run     => sub { $cv = AnyEvent->condvar; $cv->recv },
            stop    => sub { $cv->send },
        };
    },
);

# How long this process has waited for a CPU, in seconds (schedstat's
# run_delay): runnable, not running.
sub run_delay {
    open(my $fh, '<', '/proc/self/schedstat') or return 0;
    return ((split ' ', <$fh>)[1] // 0) / 1e9;
}

# How many descriptors this process has open.
sub open_fds {
    opendir my $dh, '/proc/self/fd' or die "/proc/self/fd: $!";
    return scalar grep { !/^\.\.?$/ } readdir $dh;
}

# Waits for CLAIM in LOOP (an adapter) for up to TIMEOUT seconds (then
# release() ends the wait), while a 10 ms ticker runs; SETUP->(LOOP) runs
# first, in the loop (the holder's part).  The loop runs nothing else.
# Returns what it took: got (the handle or undef), waited (s), max_gap
# (the ticker's longest gap less this process's waits for a CPU in it, s;
# max_raw_gap with them), ticks, wakes (how often the descriptor
# was readable), end (the time it ended), error, and at_end->() results.
# A child that takes NAME, says so, then runs THEN with the claim and the
# writing end of the pipe it said it on, and ends: its pid, and the
# reading end (once the claim is taken).
sub forked_holder {
    my ($name, $then) = @_;
    pipe(my $ready_r, my $ready_w) or die "pipe: $!";
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        close $ready_r;
        my $c = claim($name)->acquire or POSIX::_exit(1);
        syswrite $ready_w, 'x';
        $then->($c, $ready_w);
        POSIX::_exit(0);
    }
    close $ready_w;
    sysread $ready_r, my $byte, 1;
    return ($pid, $ready_r);
}

sub wait_in_loop {
    my ($loop, $claim, $timeout, $setup, $at_end) = @_;
    my (@ticks, %r, $watch, $try, $deadline);
    my $stop_ticker = $loop->{ticker}->(sub { push @ticks, [ time, run_delay() ] });
    my $unwatch = sub { $loop->{unwatch}->($watch) if $watch; undef $watch };
    my $done = sub {
        $r{end} = time;
        $r{at_end} = $at_end ? $at_end->() : undef;
        $unwatch->();
        $deadline->() if $deadline;
        $stop_ticker->();
        undef $try;
        $loop->{stop}->();
    };
    $r{wakes} = 0;
    $try = sub {
        $unwatch->();    # before acquire, which closes the library's descriptor
        my $ok = eval {
            if ($r{got} = $claim->acquire(0)) {
                $done->();
            } else {
                $watch = $loop->{watch}->($claim->wait_fd, sub { $r{wakes}++; $try->() if $try });
            }
            1;
        };
        if (!$ok) { $r{error} = $@; $done->() }
    };
    $deadline = $loop->{timer}->($timeout, sub {
        undef $deadline;
        $unwatch->();
        $claim->release;    # gives up: ends the library's wait
        $done->();
    });
    my $start = [ time, run_delay() ];
    $setup->($loop) if $setup;
    $loop->{timer}->(0, sub { $try->() if $try });
    $loop->{run}->();
    my @t = ($start, @ticks, [ $r{end}, run_delay() ]);
    # A gap less the time this process waited for a CPU meanwhile: what
    # the loop itself stalled (a loaded 2-core machine preempts it too).
    $r{max_gap}     = max(map { $t[$_][0] - $t[ $_ - 1 ][0] - ($t[$_][1] - $t[ $_ - 1 ][1]) } 1 .. $#t);
    $r{max_raw_gap} = max(map { $t[$_][0] - $t[ $_ - 1 ][0] } 1 .. $#t);
    $r{ticks}   = @ticks;
    $r{waited}  = $r{end} - $start->[0];
    return \%r;
}

sub ms { sprintf '%.1f ms', $_[0] * 1000 }

# What every wait that took the name shows: taken, no error, the ticker
# kept ticking (no gap over 50 ms), the descriptor woke it.
sub took_it {
    my ($r, $claim, $released_at) = @_;
    is($r->{error}, undef, 'no error');
    is($r->{got}, $claim, 'the waiter took the name');
    ok($claim->held, 'and holds it');
    cmp_ok($r->{max_gap}, '<=', 0.05,
        'the 10 ms timer kept ticking meanwhile: longest gap ' . ms($r->{max_gap})
            . ' (' . ms($r->{max_raw_gap}) . ' with its waits for a CPU)');
    cmp_ok($r->{ticks}, '>=', 10, "ticks: $r->{ticks}");
    cmp_ok($r->{wakes}, '>=', 1, "the descriptor woke it ($r->{wakes} times)");
    cmp_ok($r->{end} - $released_at, '<=', 0.1, 'woken ' . ms($r->{end} - $released_at) . ' after the release or death');
    note(sprintf 'wake-up %s after the release or death, longest tick gap %s (%s with waits for a CPU), %d ticks',
        ms($r->{end} - $released_at), ms($r->{max_gap}), ms($r->{max_raw_gap}), $r->{ticks});
}

for my $name (sort keys %loops) {
    my $loop = eval { $loops{$name}->() };
    ok($loop, "$name loads") or diag($@);
    next unless $loop;

    subtest "$name: two handles in one process, the holder releases on a timer" => sub {
        my $fds    = open_fds();
        my $holder = claim("loop-one")->acquire or return fail('the holder takes the name');
        my $waiter = claim("loop-one");
        my $released_at;
        my $r = wait_in_loop($loop, $waiter, 5, sub {
            $_[0]{timer}->(0.3, sub { $released_at = time; $holder->release });
        });
        took_it($r, $waiter, $released_at // 9**9**9);
        cmp_ok($r->{waited}, '>=', 0.29, 'after the release: ' . ms($r->{waited}));
        $waiter->release;
        is(open_fds(), $fds, 'no descriptor left open');
    };

    subtest "$name: a holder in another process releases" => sub {
        my ($pid, $ready_r) = forked_holder("loop-fork", sub {
            my ($c, $ready_w) = @_;
            sleep 0.3;
            syswrite $ready_w, sprintf('%.6f', time);
            $c->release;
            sleep 0.5;
        });
        my $fds    = open_fds();
        my $waiter = claim("loop-fork");
        my $r      = wait_in_loop($loop, $waiter, 5);
        sysread $ready_r, my $released_at, 64;
        waitpid $pid, 0;
        is($?, 0, 'the holder ran');
        took_it($r, $waiter, $released_at || 9**9**9);
        $waiter->release;
        is(open_fds(), $fds, 'no descriptor left open');
    };

    subtest "$name: a holder in another process killed (SIGKILL, not reaped)" => sub {
        my ($pid) = forked_holder("loop-kill", sub { sleep 30 });
        my $fds    = open_fds();
        my $waiter = claim("loop-kill");
        my $killed_at;
        my $state = sub { open(my $fh, '<', "/proc/$pid/stat") or return 'gone'; (split ' ', <$fh>)[2] };
        my $r = wait_in_loop($loop, $waiter, 5, sub {
            $_[0]{timer}->(0.3, sub { $killed_at = time; kill 'KILL', $pid });
        }, $state);
        is($r->{at_end}, 'Z', 'the holder was dead and not reaped when the waiter took the name');
        took_it($r, $waiter, $killed_at // 9**9**9);
        is(waitpid($pid, 0), $pid, 'reaped after');
        is($? & 127, 9, 'killed by SIGKILL');
        $waiter->release;
        is(open_fds(), $fds, 'no descriptor left open');
    };

    subtest "$name: giving up at the deadline leaves nothing open or held" => sub {
        my $fds    = open_fds();
        my $holder = claim("loop-busy")->acquire or return fail('the holder takes the name');
        my $waiter = claim("loop-busy");
        my $r      = wait_in_loop($loop, $waiter, 0.2);
        is($r->{error}, undef, 'no error');
        is($r->{got}, undef, 'not taken');
        cmp_ok($r->{waited}, '>=', 0.19, 'after the timeout: ' . ms($r->{waited}));
        cmp_ok($r->{wakes}, '==', 0, 'the descriptor never woke it');
        cmp_ok($r->{max_gap}, '<=', 0.05,
            'the 10 ms timer kept ticking: longest gap ' . ms($r->{max_gap})
                . ' (' . ms($r->{max_raw_gap}) . ' with its waits for a CPU)');
        ok(!$waiter->held, 'the waiter holds nothing');
        ok($holder->held, 'the holder still holds it');
        is(open_fds(), $fds, 'no descriptor left open (release ended the wait)');
        $holder->release;
        is($waiter->acquire, $waiter, 'the waiter takes it once free');
    };
}

subtest 'wait_fd' => sub {
    my $mine  = claim('fd');
    my $yours = claim('fd');
    $mine->acquire;
    ok(!eval { $mine->wait_fd; 1 }, 'dies while the handle holds the name');
    isa_ok($@, 'Swerve::Claim::Error');
    is($@ && $@->errno, EALREADY, 'EALREADY');
    is($yours->acquire(0), undef, 'the try fails');
    my $fd = $yours->wait_fd;
    like($fd, qr/^\d+$/, "a descriptor: $fd");
    ok(-e "/proc/self/fd/$fd", 'open');
    my $flags = do { open(my $fh, '<', "/proc/self/fdinfo/$fd") or die $!; local $/; <$fh> =~ /^flags:\s*(\d+)/m; oct $1 };
    ok($flags & 02000000, 'close-on-exec');
    vec(my $rin = '', $fd, 1) = 1;
    is(select(my $rout = $rin, undef, undef, 0.05), 0, 'not readable while the name is held');
    $mine->release;
    is(select($rout = $rin, undef, undef, 2), 1, 'readable once it is released');
    is($yours->acquire(0), $yours, 'the try takes it');
    ok(!-e "/proc/self/fd/$fd", 'the acquire closed it');
    is($mine->acquire(0), undef, 'the other handle now fails its try');
    $fd = $mine->wait_fd;
    ok(-e "/proc/self/fd/$fd", 'and waits');
    $mine->release;
    ok(!-e "/proc/self/fd/$fd", 'a release that gives up the wait closes it');
    ok($yours->held, 'and leaves the holder alone');
};

# ------------------------------------------------------------ acquire_p

subtest 'acquire_p' => sub {
    require Mojo::IOLoop;
    require Mojo::Promise;
    my $fds = open_fds();
    my $settled = sub {
        my ($promise) = @_;
        my @r;
        $promise->then(sub { @r = (ok => @_) }, sub { @r = (error => @_) })->wait;
        return @r;
    };
    my $free = claim('p-free');
    is_deeply([ $settled->($free->acquire_p(5)) ], [ ok => $free ], 'a free name: the handle');
    ok($free->held, 'held');
    is_deeply([ $settled->($free->acquire_p) ], [ ok => $free ], 'again while holding it: the handle');

    my $holder = claim('p-busy')->acquire;
    my $waiter = claim('p-busy');
    is_deeply([ $settled->($waiter->acquire_p) ], [ ok => undef ], 'acquire_p(0), one try: undef');
    my $started = time;
    is_deeply([ $settled->($waiter->acquire_p(0.2)) ], [ ok => undef ], 'busy for longer than the timeout: undef');
    cmp_ok(time - $started, '>=', 0.19, 'after the timeout');
    ok(!$waiter->held, 'holds nothing');

    my @ticks;
    my $ticker = Mojo::IOLoop->recurring(0.01 => sub { push @ticks, time });
    Mojo::IOLoop->timer(0.3 => sub { $holder->release });
    $started = time;
    is_deeply([ $settled->($waiter->acquire_p(5)) ], [ ok => $waiter ], 'released after 0.3 s: the handle');
    my $waited = time - $started;
    Mojo::IOLoop->remove($ticker);
    cmp_ok($waited, '>=', 0.29, 'once released: ' . ms($waited));
    cmp_ok(scalar @ticks, '>=', 10, 'the loop ran its other timers meanwhile: ' . scalar(@ticks) . ' ticks');
    $waiter->release;

    $holder->acquire;
    my $pending = $waiter->acquire_p(5);
    my @second  = $settled->($waiter->acquire_p(5));
    is($second[0], 'error', 'a second acquire_p on a handle that waits is refused');
    is(ref $second[1] && $second[1]->errno, EBUSY, 'EBUSY');
    Mojo::IOLoop->timer(0.1 => sub { $waiter->release });
    $started = time;
    is_deeply([ $settled->($pending) ], [ ok => undef ], 'release() ends a wait: undef');
    cmp_ok(time - $started, '<', 1, 'at once');
    my @negative = $settled->($waiter->acquire_p(-1));
    is(ref $negative[1] && $negative[1]->errno, EINVAL, 'a negative timeout: EINVAL');
    ok($holder->held, 'the holder still holds it');
    $holder->release;
    is(open_fds(), $fds, 'no descriptor left open');
};

# A thread (ithreads) clones every object it can see: a copy of a handle
# or a guard would free and release the C handle its creator holds as the
# thread ends (Perl then crashed, SIGSEGV, freeing it twice).
subtest "a thread leaves its creator's handles and guards alone" => sub {
    plan skip_all => 'this perl has no threads' unless eval { require Config; $Config::Config{useithreads} };
    my ($out, $err, $status) = run_with({}, $^X, "-I$binding", '-Mthreads', '-MSwerve::Claim=claim', '-e', <<'PERL');
my $c = claim("threaded")->acquire or die "not taken\n";
my $g = claim("guarded")->guard or die "not guarded\n";
threads->create(sub { 1 })->join;
print $c->held ? "held\n" : "lost\n";
print claim("guarded")->available ? "guard lost\n" : "guarded\n";
PERL
    # (Its last lines: a crash at the thread's end prints neither.)
    is($out, "held\nguarded\n", 'a claim and a guard hold on after the thread ends')
        or diag("exit status $status: $err");
};

done_testing;
