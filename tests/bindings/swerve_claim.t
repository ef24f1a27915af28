# The Perl binding (bindings/perl/Swerve/Claim.pm) under the shim, with
# Test::More: run by tests/bindings/perl.sh, which preloads the shim into
# this perl and gives it SWERVE_TMPDIR.
use strict;
use warnings;

use Errno qw(EINVAL ENAMETOOLONG);
use File::Basename qw(dirname);
use File::Spec;
use File::Temp qw(tempdir);
use IPC::Open3 qw(open3);
use POSIX ();
use Symbol qw(gensym);
use Test::More;
use Time::HiRes qw(time sleep);

use Swerve::Claim qw(claim);

my $here     = File::Spec->rel2abs(dirname(__FILE__));
my $expected = "$here/../packaging/bindings/expected";
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
for my $example (
    qw(guide-claims guide-waiting guide-releasing class-1 class-2 class-3 context-manager fencing-token draining))
{
    my $base = tempdir(CLEANUP => 1);
    my ($out, $err, $status) =
        run_with({ SWERVE_TMPDIR => $base }, $^X, "-I$binding", "$here/seed_examples.pl", $example);
    subtest "seed example $example" => sub {
        is($status, 0, 'exit status 0');
        is($out, slurp("$expected/$example.txt"), "prints what the seed prints");
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
    is("$@", "claim '': $!\n", 'the message is strerror');
    ok(!eval { claim('x' x 4097); 1 }, 'a name too long dies');
    is($@->errno, ENAMETOOLONG, 'ENAMETOOLONG');
    ok(!eval { claim('negative')->acquire(-1); 1 }, 'a negative timeout dies');
    is($@->errno, EINVAL, 'EINVAL');
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
