-- SPDX-License-Identifier: MIT
-- For tests/real-servers/nginx.sh with the claims in PostgreSQL: the seed's
-- nightly-report pattern in nginx's workers, on the shim's API through
-- LuaJIT's FFI (the preloaded library's symbols are in ffi.C).
-- ?seconds=N: how long the report takes (1.5); /status: free or held;
-- /hold and /take, a leader that lets go once its worker is drained (lib.sh's
-- drain_check; nginx tells a worker by its channel, and the worker closes
-- its listeners: ngx.worker.exiting() says when nginx told it).
local ffi = require "ffi"
ffi.cdef [[
struct swerve_claim;
struct swerve_claim *swerve_claim_new(const char *name);
int swerve_claim_available(const struct swerve_claim *claim);
struct swerve_claim *swerve_claim_acquire(struct swerve_claim *claim, double timeout);
int swerve_claim_release(struct swerve_claim *claim);
void swerve_claim_free(struct swerve_claim *claim);
int swerve_claim_draining(void);
char *strerror(int errnum);
]]
local C = ffi.C
local EWOULDBLOCK = 11

local function failed(what)
    local e = ffi.errno()
    ngx.status = 500
    ngx.say(what, ": ", ffi.string(C.strerror(e)))
end

function report()
    local seconds = tonumber(ngx.var.arg_seconds) or 1.5
    local c = C.swerve_claim_new("nightly-report")
    if c == nil then return failed("new") end
    if C.swerve_claim_acquire(c, 0) ~= nil then
        ngx.sleep(seconds) -- the report; this worker serves others meanwhile
        ngx.say("worker ", ngx.worker.pid(), " runs the report")
        C.swerve_claim_release(c)
    elseif ffi.errno() == EWOULDBLOCK then
        ngx.say("worker ", ngx.worker.pid(), ": someone else is on it")
    else
        failed("acquire")
    end
    C.swerve_claim_free(c)
end

function status()
    local c = C.swerve_claim_new("nightly-report")
    if c == nil then return failed("new") end
    local free = C.swerve_claim_available(c)
    if free < 0 then failed("available") else ngx.print(free == 1 and "free" or "held") end
    C.swerve_claim_free(c)
end

local function now_ns()
    ngx.update_time()
    return string.format("%.0f", ngx.now() * 1e9)
end

function hold()
    local c = C.swerve_claim_new("leader")
    if c == nil then return failed("new") end
    if C.swerve_claim_acquire(c, 5) == nil then
        C.swerve_claim_free(c)
        return failed("acquire")
    end
    local told
    for _ = 1, 12000 do -- 60 s at most
        if not told and ngx.worker.exiting() then told = now_ns() end
        if C.swerve_claim_draining() == 1 then
            local seen = now_ns()
            C.swerve_claim_release(c)
            C.swerve_claim_free(c)
            ngx.say("drained ", ngx.worker.pid(), " ", seen, " ", told or seen)
            return
        end
        ngx.sleep(0.005)
    end
    C.swerve_claim_free(c)
    ngx.say("never drained ", ngx.worker.pid())
end

function take()
    local c = C.swerve_claim_new("leader")
    if c == nil then return failed("new") end
    ngx.say(C.swerve_claim_acquire(c, 5) ~= nil and "took " or "busy ", ngx.worker.pid())
    C.swerve_claim_free(c)
end
