-- Replays a pool of pre-built, pre-signed raw HTTP/1.1 requests (made by
-- bench/wrk.py's write_pool) over wrk's keep-alive connections. The request bytes are the
-- same for every server, so servers are compared on identical traffic, and
-- wrk spends no CPU building requests.
--
-- Arguments (after `--` on wrk's command line):
--   1: path of the request pool file: repeated "<byte length>\n<raw request>"
--   2: "check" to verify every response (status 200 and body containing the
--      expected text), anything else to only count errors the cheap way
--   3: the text every good response body contains (e.g. "Item" for GetItem)
--   4: wrk's thread count (to spread the threads' start points over the pool)
--
-- done() prints one line "BENCH_RESULT {json}" that bench/wrk.py parses.

local threads = {}

function setup(thread)
    thread:set("thread_index", #threads)
    table.insert(threads, thread)
end

local pool = {}
local pool_size = 0
local pos = 0
local checking = false
local expect = ""
bad_status = 0
bad_body = 0
checked = 0
first_bad = ""

local function load_pool(path)
    local f = assert(io.open(path, "rb"))
    local data = f:read("*a")
    f:close()
    local at = 1
    local n = #data
    while at <= n do
        local nl = string.find(data, "\n", at, true)
        if not nl then break end
        local len = tonumber(string.sub(data, at, nl - 1))
        pool_size = pool_size + 1
        pool[pool_size] = string.sub(data, nl + 1, nl + len)
        at = nl + 1 + len
    end
    assert(pool_size > 0, "empty request pool " .. path)
end

function init(args)
    load_pool(args[1])
    checking = args[2] == "check"
    expect = args[3] or ""
    -- each thread starts at a different place in the pool
    local spread = math.floor(pool_size / math.max(tonumber(args[4]) or 1, 1))
    pos = ((thread_index or 0) * spread) % pool_size
    if not checking then
        response = nil -- keep wrk's fast path: no Lua call per response
    end
end

function request()
    pos = pos + 1
    if pos > pool_size then pos = 1 end
    return pool[pos]
end

function response(status, headers, body)
    checked = checked + 1
    if status ~= 200 then
        bad_status = bad_status + 1
        if first_bad == "" then first_bad = tostring(status) .. " " .. string.sub(body or "", 1, 300) end
    elseif expect ~= "" and not string.find(body or "", expect, 1, true) then
        bad_body = bad_body + 1
        if first_bad == "" then first_bad = "200 " .. string.sub(body or "", 1, 300) end
    end
end

local function json_string(s)
    s = string.gsub(s, '[%c"\\]', function(c)
        if c == '"' then return '\\"' end
        if c == "\\" then return "\\\\" end
        return string.format("\\u%04x", string.byte(c))
    end)
    return '"' .. s .. '"'
end

function done(summary, latency, requests)
    local bs, bb, ck, fb = 0, 0, 0, ""
    for _, t in ipairs(threads) do
        bs = bs + (t:get("bad_status") or 0)
        bb = bb + (t:get("bad_body") or 0)
        ck = ck + (t:get("checked") or 0)
        if fb == "" then fb = t:get("first_bad") or "" end
    end
    local e = summary.errors
    local parts = {
        string.format('"requests": %d', summary.requests),
        string.format('"duration_us": %d', summary.duration),
        string.format('"bytes": %d', summary.bytes),
        string.format('"errors_connect": %d', e.connect),
        string.format('"errors_read": %d', e.read),
        string.format('"errors_write": %d', e.write),
        string.format('"errors_timeout": %d', e.timeout),
        string.format('"errors_status": %d', e.status),
        string.format('"checked": %d', ck),
        string.format('"bad_status": %d', bs),
        string.format('"bad_body": %d', bb),
        '"first_bad": ' .. json_string(fb),
        string.format('"lat_mean_us": %.1f', latency.mean),
        string.format('"lat_max_us": %d', latency.max),
        string.format('"lat_p50_us": %d', latency:percentile(50)),
        string.format('"lat_p90_us": %d', latency:percentile(90)),
        string.format('"lat_p99_us": %d', latency:percentile(99)),
        string.format('"lat_p999_us": %d', latency:percentile(99.9)),
    }
    io.write("BENCH_RESULT {" .. table.concat(parts, ", ") .. "}\n")
end
