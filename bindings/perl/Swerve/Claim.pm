# SPDX-License-Identifier: MIT
package Swerve::Claim;

# Swerve claims for Perl: a name one process at a time can hold across a
# whole prefork server (Starman, Net::Server::PreFork, Apache + mod_perl),
# and, through a descriptor to wait on, from an event loop (Mojo::IOLoop,
# IO::Async, AnyEvent) without blocking it.
# The functions come from libswerveclaim_preload.so, found through
# FFI::Platypus->new(api => 2)->lib(undef) (the program and what it has
# loaded, LD_PRELOAD included) when the server runs under the shim.  POD at
# the end.

use strict;
use warnings;

use Carp ();
use Errno qw(EWOULDBLOCK ETIMEDOUT EINVAL EBUSY);
use Exporter qw(import);
use FFI::Platypus 2.00;

our $VERSION   = '0.1.0';
our @EXPORT_OK = qw(claim draining);

# Each function once: the Perl sub it becomes, its arguments, its result,
# and whether a library without it is still this binding's (the version
# node that brought it, or '' when every version has it).
my @FUNCTIONS = (
    [ swerve_claim_new       => ['string'],           'opaque', '' ],
    [ swerve_claim_available => ['opaque'],           'int',    '' ],
    [ swerve_claim_acquire   => [ 'opaque', 'double' ], 'opaque', '' ],
    [ swerve_claim_held      => ['opaque'],           'int',    '' ],
    [ swerve_claim_release   => ['opaque'],           'int',    '' ],
    [ swerve_claim_free      => ['opaque'],           'void',   '' ],
    [ swerve_claim_token     => ['opaque'],           'uint64', 'SWERVECLAIM_1.1' ],
    [ swerve_claim_draining  => [],                   'int',    'SWERVECLAIM_1.2' ],
    [ swerve_claim_wait_fd   => ['opaque'],           'int',    'SWERVECLAIM_1.3' ],
    [ swerve_claim_why       => [],                   'string', 'SWERVECLAIM_1.4' ],
);

my $loaded;

# Binds the library's functions as subs of Swerve::Claim::C, once: from
# then on a claim costs no lookup, and they outlive every handle, even in
# global destruction.
sub _shim {
    return if $loaded;
    my $ffi = FFI::Platypus->new(api => 2, lib => [undef]);
    for my $f (@FUNCTIONS) {
        my ($name, $args, $result, $since) = @$f;
        if (!$ffi->find_symbol($name)) {
            next if $since;    # an older library: the method says so
            die Swerve::Claim::ShimNotLoaded->new('libswerveclaim_preload.so is not loaded: run under '
                    . 'LD_PRELOAD=libswerveclaim_preload.so (or swerve-claim-preload)');
        }
        $ffi->attach([ $name => "Swerve::Claim::C::$name" ] => $args => $result);
    }
    $loaded = 1;
}

# The longest name an error shows whole, in characters.
use constant NAME_SHOWN => 64;

# NAME as an error shows it: its first NAME_SHOWN characters and "..." (in
# one character, U+2026) when longer, in UTF-8 bytes as the message is.
sub _cut {
    my ($name) = @_;
    my $chars = $name;
    utf8::decode($chars) unless utf8::is_utf8($chars);    # left as bytes when it is no UTF-8
    return $name if length($chars) <= NAME_SHOWN;
    my $cut = substr($chars, 0, NAME_SHOWN);
    utf8::encode($cut) if utf8::is_utf8($cut);
    return "$cut\xe2\x80\xa6";
}

# A call of the library failed: dies with its errno (read at once, before
# Perl makes another call), WHAT with %s for the NAME it concerns (cut),
# and the library's why (swerve_claim_why(3), SWERVECLAIM_1.4) if it says one.
sub _fail {
    my ($what, $errno, $name) = @_;
    my $why = defined &Swerve::Claim::C::swerve_claim_why ? Swerve::Claim::C::swerve_claim_why() : undef;
    die Swerve::Claim::Error->new(defined $name ? sprintf($what, _cut($name)) : $what, $errno, $why);
}

# Swerve::claim($name): a handle on NAME.
sub claim { return Swerve::Claim->new(@_) }

sub new {
    my ($class, $name) = @_;
    Carp::croak('a claim needs a name') unless defined $name;
    # C would cut the name there, and "a\0b" would be "a\0c".
    Carp::croak('claim name contains a NUL byte') if index($name, "\0") >= 0;
    _shim();
    my $handle = Swerve::Claim::C::swerve_claim_new($name);
    _fail("claim '%s'", $! + 0, $name) unless defined $handle;
    return bless { handle => $handle, name => $name }, ref($class) || $class;
}

sub name { $_[0]{name} }

# Swerve::draining(): whether this worker is being drained, its server
# stopping it gracefully (a reload, a stop): true once its master told it
# (a drain signal), it closed the listeners it inherited, its master
# ended, or an operator ran `swerve-claim drain` on it
# (swerve_claim_draining(3)).  Draining releases nothing: a long-lived
# holder asks now and then and releases its claim itself.  Cheap enough to
# ask every few milliseconds.
sub draining {
    _shim();
    Carp::croak('this libswerveclaim_preload.so has no swerve_claim_draining')
        unless defined &Swerve::Claim::C::swerve_claim_draining;
    my $r = Swerve::Claim::C::swerve_claim_draining();
    _fail('draining', $! + 0) if $r < 0;
    return $r == 1;
}

# Whether nobody holds the name now; claims nothing.
sub available {
    my $self = shift;
    my $r = Swerve::Claim::C::swerve_claim_available($self->{handle});
    _fail("available '%s'", $! + 0, $self->{name}) if $r < 0;
    return $r == 1;
}

# Takes the name, trying every 20 ms for up to TIMEOUT seconds (0: once,
# without blocking: the try of an event loop's wait; 9**9**9: for ever).
# The handle, or undef when another holds it.
sub acquire {
    my ($self, $timeout) = @_;
    return $self if defined Swerve::Claim::C::swerve_claim_acquire($self->{handle}, $timeout // 0);
    my $errno = $! + 0;
    return undef if $errno == EWOULDBLOCK || $errno == ETIMEDOUT;
    _fail("acquire '%s'", $errno, $self->{name});
}

# The descriptor to wait on after acquire(0) returned undef: readable once
# the name may have come free since that try (swerve_claim_wait_fd(3)).
# The library's: watch it, never read, write or close it, and stop
# watching it before acquire, release or the handle's end, which close it.
sub wait_fd {
    my $self = shift;
    Carp::croak('this libswerveclaim_preload.so has no swerve_claim_wait_fd')
        unless defined &Swerve::Claim::C::swerve_claim_wait_fd;
    my $fd = Swerve::Claim::C::swerve_claim_wait_fd($self->{handle});
    _fail("wait_fd '%s'", $! + 0, $self->{name}) if $fd < 0;
    return $fd;
}

# A Mojo::Promise of the name: resolved with the handle once it is taken,
# with undef after TIMEOUT seconds (0: one try; 9**9**9: no limit) or once
# release() ends the wait, rejected with a Swerve::Claim::Error; meanwhile
# Mojo::IOLoop's singleton runs everything else.
sub acquire_p {
    my ($self, $timeout) = @_;
    require Mojo::IOLoop;
    require Mojo::Promise;
    $timeout //= 0;
    my $promise = Mojo::Promise->new;
    my $name    = $self->{name};
    return $promise->reject(Swerve::Claim::Error->new("acquire_p '$name'", EINVAL))
        unless $timeout >= 0;    # NaN too
    return $promise->reject(Swerve::Claim::Error->new("acquire_p '$name': already waiting", EBUSY))
        if $self->{wait};
    my $reactor = Mojo::IOLoop->singleton->reactor;
    my ($fh, $timer, $try);
    # Stops watching: our copy of the descriptor leaves the loop, then is
    # closed (the library's own is left to the library).
    my $unwatch = sub {
        return unless $fh;
        $reactor->remove($fh);
        close $fh;
        undef $fh;
    };
    # Ends the wait, once (Mojo::Promise ignores a second settling).
    my $settle = sub {
        my ($how, $value) = @_;
        $unwatch->();
        $reactor->remove($timer) if defined $timer;
        undef $timer;
        undef $try;    # the closures' cycle
        delete $self->{wait};
        $promise->$how($value);
    };
    $try = sub {
        $unwatch->();    # before acquire, which closes the library's descriptor
        my ($got, $fd);
        return $settle->(reject => $@)
            unless eval { $got = $self->acquire(0); $got || $timeout == 0 || defined($fd = $self->wait_fd) };
        return $settle->(resolve => $got) if $got || $timeout == 0;    # undef: one try, not taken
        # A copy, so that closing ours (a Perl handle closes its descriptor
        # as it goes) leaves the library's open.
        if (!open($fh, '<&', $fd)) {
            my $error = Swerve::Claim::Error->new("acquire_p '" . Swerve::Claim::_cut($name) . "': dup", $! + 0);
            undef $fh;
            eval { $self->release };    # ends the library's wait (and settles)
            return $settle->(reject => $error);
        }
        $reactor->io($fh => sub { $try->() if $try })->watch($fh, 1, 0);
    };
    $self->{wait} = sub { $settle->(resolve => undef) };
    $try->();
    # The timer stops watching, then release() ends the library's wait,
    # which settles the promise with undef.
    $timer = $reactor->timer($timeout => sub { undef $timer; eval { $self->release; 1 } or $settle->(reject => $@) })
        if $try && $timeout != 9**9**9;
    return $promise;
}

# Whether this handle holds the name: acquired and not released.
sub held { Swerve::Claim::C::swerve_claim_held($_[0]{handle}) == 1 }

# A fencing token for this hold of the name, 0 when nothing is held:
# greater than every earlier hold's (swerve_claim_token(3)).
sub token {
    my $self = shift;
    Carp::croak('this libswerveclaim_preload.so has no swerve_claim_token')
        unless defined &Swerve::Claim::C::swerve_claim_token;
    return Swerve::Claim::C::swerve_claim_token($self->{handle});
}

# Gives the name up; does nothing when nothing is held.  Ends a wait:
# acquire_p's promise resolves with undef.
sub release {
    my $self = shift;
    $self->{wait}->() if $self->{wait};    # it unwatches its descriptor first
    _fail("release '%s'", $! + 0, $self->{name}) if Swerve::Claim::C::swerve_claim_release($self->{handle}) != 0;
    return;
}

# Holds the name for as long as the guard lives: the guard, or undef when
# another holds it (after TIMEOUT).  The handle lives on after it.
sub guard {
    my ($self, $timeout) = @_;
    return $self->acquire($timeout) ? Swerve::Claim::Guard->new($self) : undef;
}

# Frees the C handle, which releases what it holds.  A child that inherited
# the object frees its own copy of the handle, which holds nothing there.
sub DESTROY {
    my $self = shift;
    my $handle = delete $self->{handle};
    Swerve::Claim::C::swerve_claim_free($handle) if defined $handle && $loaded;
}

# A thread gets undef for every handle and guard (perlmod, "Making your
# module threadsafe"): a copy would name the same C handle, which the
# copy's DESTROY would free (and release) under the thread that made it.
sub CLONE_SKIP { 1 }

package Swerve::Claim::Guard;

sub new { bless { claim => $_[1] }, $_[0] }
sub CLONE_SKIP { 1 }
sub claim { $_[0]{claim} }

sub DESTROY {
    my $claim = $_[0]{claim};
    local ($@, $!);    # unwinding a die: keep its message
    eval { $claim->release if $claim->{handle} };
}

package Swerve::Claim::Error;

# A system call failed: errno, and the message that goes with it: WHAT,
# then the library's WHY when it has one, and errno's text unless WHY says it.
use overload '""' => sub { $_[0]{message} }, fallback => 1;

sub new {
    my ($class, $what, $errno, $why) = @_;
    local $! = $errno;
    my $text = "$!";
    $text = index($why, $text) >= 0 ? $why : "$why: $text" if defined $why;
    return bless { errno => $errno, message => "$what: $text\n" }, $class;
}
sub errno   { $_[0]{errno} }
sub message { $_[0]{message} }

package Swerve::Claim::ShimNotLoaded;

# libswerveclaim_preload.so is not preloaded into this process: the caller
# decides what running without claims means.
use overload '""' => sub { $_[0]{message} }, fallback => 1;

sub new     { bless { message => "$_[1]\n" }, $_[0] }
sub message { $_[0]{message} }

1;

__END__

=head1 NAME

Swerve::Claim - a name one worker at a time can hold across a prefork server

=head1 SYNOPSIS

    LD_PRELOAD=libswerveclaim_preload.so starman app.psgi

    use Swerve::Claim qw(claim);

    if (my $claim = claim('nightly-report')->acquire) {
        run_report();
    }                       # released when $claim goes out of scope

    use Swerve::Claim qw(draining);
    my $leader = claim('leader')->acquire;
    until (draining()) {    # a reload or a stop: let go, so that it
        do_some_leading();  # does not wait for this worker
    }
    $leader->release;

    my $import = claim('import');
    if (my $guard = $import->guard(5)) {    # waits up to 5 s
        import_feed();
    }                       # released when $guard goes, even by die

=head1 DESCRIPTION

Swerve's claims over C<libswerveclaim_preload.so> (swerve_claim(3)).
C<claim($name)> (or C<< Swerve::Claim->new($name) >>) is a handle on a name;
nothing is claimed until C<acquire>.  A claim is held until it is released,
its handle is destroyed, or the worker that holds it exits or dies.

=over

=item available

True when nobody holds the name now; claims nothing.

=item acquire([$timeout])

Takes the name, trying every 20 ms for up to C<$timeout> seconds (default 0:
once).  Returns the handle, or C<undef> when another holds it.  A waiting
acquire blocks the process: in an event loop, use C<acquire(0)>, the
non-blocking try, with C<wait_fd> (L</"IN AN EVENT LOOP">), or C<acquire_p>.

=item wait_fd

After C<acquire(0)> returned C<undef>: a file descriptor number that becomes
readable once the name may have come free since that try (its holder
released it, in any process, or ended, also killed and not yet reaped, or
an operator released it by force; at once when it is free already).
Readable means "try C<acquire(0)> again"; another may take the name first,
and then you call C<wait_fd> again.  Nothing else makes it readable: the
timeout is your loop's timer.  Dies with a C<Swerve::Claim::Error>
(C<EALREADY> when this handle holds the name); croaks when the library is
older than SWERVECLAIM_1.3.

The descriptor is the library's: watch it, never read, write or close it,
and stop watching it before C<acquire>, C<release> or the end of the handle,
which close it.  A waiter that gives up calls C<release>: it holds nothing,
and that ends the wait (the descriptor is closed).

=item acquire_p([$timeout])

With L<Mojolicious> loaded: a L<Mojo::Promise> resolved with the handle once
it takes the name, or with C<undef> after C<$timeout> seconds (default 0:
one try; C<9**9**9>: no limit) or when C<release> ends the wait; rejected
with a C<Swerve::Claim::Error>.  It waits on C<wait_fd> in
C<< Mojo::IOLoop->singleton >>, which runs everything else meanwhile.  One
at a time per handle (a second one is rejected with C<EBUSY>).  With
L<Future::AsyncAwait>, C<< my $claim = await claim('import')->acquire_p(5) >>.

=item held

True while this handle holds the name.

=item release

Gives the name up; the handle lives on.  Does nothing when nothing is held.

=item token

A fencing token for this hold, 0 when nothing is held.

=item guard([$timeout])

Acquires, and returns a guard object whose destruction releases the claim
(at the end of its scope, also when a C<die> leaves it), or C<undef> when
another holds the name.

=back

=over

=item draining

A function (C<Swerve::Claim::draining()>, exported on request): true once
this worker is being drained (its master sent it a drain signal, it closed
the listeners it inherited, its master ended, or C<swerve-claim drain> told
it). Draining releases nothing: a long-lived holder asks now and then and
releases its claim itself, so that a reload does not wait for it.

=back

=head1 IN AN EVENT LOOP

A waiting C<acquire($timeout)> blocks the whole process, and every other
request, timer or coroutine of its event loop with it.  In an event loop
(Mojolicious, IO::Async, AnyEvent, hypnotoad's workers), wait like this,
as libpq's C<PQsocket> is waited on:

    until ($claim->acquire(0)) {           # the try: never blocks
        my $fd = $claim->wait_fd;          # dies on a system error
        # wait until $fd is readable, or give up: $claim->release
    }

The loop needs to be told to watch the descriptor for reading, and to stop
before the next C<acquire> (or C<release>), which closes it.  Mojo::IOLoop
and IO::Async watch Perl handles, and a Perl handle closes its descriptor
when it goes: give them a copy (C<< open(my $fh, '<&', $fd) >>, a dup that
is readable when the library's is) and close the copy as you stop watching.
Never C<< open(my $fh, '<&=', $fd) >> nor C<< IO::Handle->new_from_fd >>: they
wrap the library's own descriptor, and close it as they go.  With
Mojo::IOLoop:

    use Mojo::IOLoop;
    use Swerve::Claim qw(claim);

    # Calls $cb->($claim) once it holds the name, $cb->(undef) after
    # $timeout seconds; the loop runs everything else meanwhile.
    sub acquire_later {
        my ($claim, $timeout, $cb) = @_;
        my $reactor = Mojo::IOLoop->singleton->reactor;
        my ($fh, $timer, $try);
        my $unwatch = sub { $reactor->remove($fh), close $fh if $fh; undef $fh };
        my $done = sub { $unwatch->(); $reactor->remove($timer); undef $try; $cb->(@_) };
        $try = sub {
            $unwatch->();                  # before acquire, which closes it
            return $done->($claim) if $claim->acquire(0);
            open($fh, '<&', $claim->wait_fd) or die "dup: $!";
            $reactor->io($fh => sub { $try->() if $try })->watch($fh, 1, 0);
        };
        $timer = $reactor->timer($timeout => sub {
            $unwatch->();
            $claim->release;               # gives up: ends the library's wait
            $done->(undef);
        });
        $try->();
    }

    my $claim = claim('import');
    acquire_later($claim, 5, sub {
        my ($held) = @_;
        print $held ? "importing\n" : "gave up\n";
        $claim->release;
        Mojo::IOLoop->stop;
    });
    Mojo::IOLoop->start;

C<acquire_p> is that, as a promise:

    claim('import')->acquire_p(5)->then(sub {
        my ($claim) = @_;
        return unless $claim;              # undef: gave up after 5 s
        import_feed();
        $claim->release;
    });

In a Mojolicious action, C<< $c->render_later >> first (or return the promise
from an async action); the worker serves its other requests while the
action waits.

With IO::Async, the same copy of the descriptor:
C<< $loop->watch_io(handle => $fh, on_read_ready => $try) >>, and
C<< $loop->unwatch_io(handle => $fh, on_read_ready => 1); close $fh >> before
the next try.  AnyEvent takes the number itself, no copy:
C<< my $w = AnyEvent->io(fh => $fd, poll => 'r', cb => $try) >>, and
C<undef $w> before the next try.

=head1 ERRORS

A system call's failure dies with a C<Swerve::Claim::Error> (C<errno>,
C<message>; it stringifies to the message).  The message says what failed
(a name longer than 64 characters cut, with "\x{2026}"), then why, as
swerve_claim_why(3) says it (since SWERVECLAIM_1.4: "acquire 'report':
cannot open /srv/x for claim directories: Permission denied (EACCES)"), or
errno's text.  Without the shim preloaded,
C<new> dies with a C<Swerve::Claim::ShimNotLoaded>.  A name with a NUL byte
is refused (C would cut it short).

=head1 SEE ALSO

swerve_claim(3), swerve-claim(1), L<FFI::Platypus>

=cut
