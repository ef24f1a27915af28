package Swerve::Claim;

# Swerve claims for Perl: a name one process at a time can hold across a
# whole prefork server (Starman, Net::Server::PreFork, Apache + mod_perl).
# The functions come from libswerveclaim_preload.so, found through
# FFI::Platypus->new(api => 2)->lib(undef) (the program and what it has
# loaded, LD_PRELOAD included) when the server runs under the shim.  POD at
# the end.

use strict;
use warnings;

use Carp ();
use Errno qw(EWOULDBLOCK ETIMEDOUT);
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

# A system call failed: dies with its errno (read at once, before Perl
# makes another call) and its message.
sub _fail {
    my ($what, $errno) = @_;
    die Swerve::Claim::Error->new($what, $errno);
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
    _fail("claim '$name'", $! + 0) unless defined $handle;
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
    _fail("available '$self->{name}'", $! + 0) if $r < 0;
    return $r == 1;
}

# Takes the name, trying every 20 ms for up to TIMEOUT seconds (0: once;
# 9**9**9: for ever).  The handle, or undef when another holds it.
sub acquire {
    my ($self, $timeout) = @_;
    return $self if defined Swerve::Claim::C::swerve_claim_acquire($self->{handle}, $timeout // 0);
    my $errno = $! + 0;
    return undef if $errno == EWOULDBLOCK || $errno == ETIMEDOUT;
    _fail("acquire '$self->{name}'", $errno);
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

# Gives the name up; does nothing when nothing is held.
sub release {
    my $self = shift;
    _fail("release '$self->{name}'", $! + 0) if Swerve::Claim::C::swerve_claim_release($self->{handle}) != 0;
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

# A system call failed: errno, and the message that goes with it.
use overload '""' => sub { $_[0]{message} }, fallback => 1;

sub new {
    my ($class, $what, $errno) = @_;
    local $! = $errno;
    return bless { errno => $errno, message => "$what: $!\n" }, $class;
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
once).  Returns the handle, or C<undef> when another holds it.

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

A system call's failure dies with a C<Swerve::Claim::Error> (C<errno>,
C<message>; it stringifies to the message).  Without the shim preloaded,
C<new> dies with a C<Swerve::Claim::ShimNotLoaded>.  A name with a NUL byte
is refused (C would cut it short).

=head1 SEE ALSO

swerve_claim(3), swerve-claim(1), L<FFI::Platypus>

=cut
