# SPDX-License-Identifier: MIT
# A Mojolicious::Lite app for tests/real-servers/hypnotoad.sh: /report
# waits up to 5 s for the claim "report" without blocking its worker
# (Swerve::Claim's acquire_p: the loop watches the claim's wait_fd), holds
# it 0.4 s on a Mojo::IOLoop timer and answers "report PID ASKED START
# END" (epoch seconds: when it was asked, took the claim, let it go), or
# "gave up PID"; /report?blocking=1 is the same with a blocking
# acquire(5), the control; /ping answers "pong PID TIME" at once; /status
# says whether the claim is free.  hypnotoad reads its settings here, from
# the environment the test gives it.
use Mojolicious::Lite -signatures;

use Swerve::Claim qw(claim draining);
use Time::HiRes ();

app->config(
    hypnotoad => {
        listen           => ["http://127.0.0.1:$ENV{SCL_HYPNOTOAD_PORT}"],
        workers          => 2,
        pid_file         => $ENV{SCL_HYPNOTOAD_PID},
        graceful_timeout => 10,
    });
app->log->level('info');

sub now { sprintf '%.6f', Time::HiRes::time() }

get '/report' => sub ($c) {
    my $asked = now();
    my $claim = claim('report');
    my $hold  = $c->param('hold') // 0.4;
    my $run   = sub ($held) {
        return $c->render(text => "gave up $$\n") unless $held;
        my $start = now();
        Mojo::IOLoop->timer(
            $hold => sub {
                my $end = now();
                $held->release;
                $c->render(text => "report $$ $asked $start $end\n");
            });
    };
    $c->inactivity_timeout(60);
    $c->render_later;
    return $run->($claim->acquire(5)) if $c->param('blocking');    # stalls the worker: the control
    $claim->acquire_p(5)->then($run)->catch(sub ($error) { $c->render(text => "error $$ $error", status => 500) });
};

get '/ping' => sub ($c) { $c->render(text => "pong $$ " . now() . "\n") };

get '/status' => sub ($c) { $c->render(text => claim('report')->available ? 'free' : 'held') };

# A leader (lib.sh's drain_on_stop): holds "leader" and asks draining()
# every 5 ms on a recurring timer; answers "drained PID NS TOLD_NS" once
# it is 1, TOLD_NS when the manager's QUIT reached the worker (its
# handler, Mojo's graceful stop, chained).
get '/hold' => sub ($c) {
    my $leader = claim('leader')->acquire or return $c->render(text => "busy $$\n");
    $c->inactivity_timeout(60);
    $c->render_later;
    my $told = '';
    my $quit = $SIG{QUIT};
    $SIG{QUIT} = sub { $told ||= int(Time::HiRes::time() * 1e9); $quit->(@_) if ref $quit eq 'CODE' };
    my ($id, $rounds);
    $id = Mojo::IOLoop->recurring(
        0.005 => sub {
            return unless draining() || ++$rounds > 12000;    # 60 s at most
            my $seen = int(Time::HiRes::time() * 1e9);
            Mojo::IOLoop->remove($id);
            $leader->release;
            $c->render(text => "drained $$ $seen $told\n");
        });
};

get '/take' => sub ($c) {
    $c->render_later;
    claim('leader')->acquire_p(5)->then(sub ($held) { $c->render(text => $held ? "took $$\n" : "busy $$\n") });
};

# The worker's pid, once it has bound the library (its first claim).
get '/' => sub ($c) { claim('report')->available; $c->render(text => "$$\n") };

app->start;
