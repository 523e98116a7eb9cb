#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Readers and validators of upti's outputs, for the tests and bench/output.

  traceck.py pftrace FILE   decode a Perfetto protobuf trace and check its structure
  traceck.py json FILE      parse a Chrome JSON trace and check its structure
  traceck.py csv FILE...    parse CSV files (RFC 4180) and check column counts

Each prints one summary line (counts) and exits 1 on the first violation.
"""
import csv
import json
import sys
import time


def fail(msg):
    print("traceck: " + msg, file=sys.stderr)
    sys.exit(1)


def varint(buf, i):
    shift = 0
    v = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        if b < 0x80:
            return v, i
        shift += 7


def fields(buf):
    """Yields (field, wire, value) of one message; value is int or bytes."""
    i, n = 0, len(buf)
    while i < n:
        key, i = varint(buf, i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = varint(buf, i)
        elif w == 1:
            v = int.from_bytes(buf[i:i + 8], "little")
            i += 8
        elif w == 2:
            ln, i = varint(buf, i)
            v = buf[i:i + ln]
            if len(v) != ln:
                raise ValueError("truncated field %d" % f)
            i += ln
        elif w == 5:
            v = int.from_bytes(buf[i:i + 4], "little")
            i += 4
        else:
            raise ValueError("bad wire type %d" % w)
        yield f, w, v


def int64(v):
    """A varint's value as protobuf's int64 (two's complement)."""
    return v - (1 << 64) if v >= 1 << 63 else v


def decode_pftrace(path):
    """Returns dict with tracks {uuid: desc}, slices [(track, ts, end, name, flows_out, flows_in)],
    instants, counters {track uuid: [(ts, value)]}, clock_snapshots [{clock_id: timestamp}] and
    defaults (TracePacketDefaults, per packet in order: [(packet index, {field: value})]) and
    packet_clocks (the timestamp_clock_id values packets set themselves).

    Field numbers are those of Perfetto's protos (protos/perfetto/trace/trace_packet.proto,
    clock_snapshot.proto, trace_packet_defaults.proto, track_event/track_descriptor.proto,
    counter_descriptor.proto, track_event.proto)."""
    data = open(path, "rb").read()
    tracks, names, open_, arg_names = {}, {}, {}, {}
    slices, instants = [], []
    counters, snapshots, defaults, packet_clocks = {}, [], [], set()
    last_ts = {}
    flows_out, flows_in = set(), set()
    packets = 0
    for f, w, pkt in fields(data):
        if f != 1 or w != 2:
            fail("top-level field %d is not Trace.packet" % f)
        packets += 1
        ts, ev, seq = None, None, None
        for pf, pw, pv in fields(pkt):
            if pf == 6:  # clock_snapshot
                snap = {}
                for cf, _, cv in fields(pv):
                    if cf == 1:  # Clock
                        c = {k: v for k, _, v in fields(cv)}
                        if c.get(1) in snap:
                            fail("clock %r twice in one snapshot" % c.get(1))
                        snap[c.get(1)] = c.get(2)
                snapshots.append(snap)
            elif pf == 58:  # timestamp_clock_id of this packet
                packet_clocks.add(pv)
            elif pf == 59:  # trace_packet_defaults
                defaults.append((packets - 1, {k: v for k, _, v in fields(pv)}))
            elif pf == 8:
                ts = pv
            elif pf == 10:
                seq = pv
            elif pf == 12:
                for inf, _, inv in fields(pv):
                    if inf == 2:
                        d = {k: v for k, _, v in fields(inv)}
                        names[d[1]] = d[2].decode("utf-8")  # must be valid UTF-8
                    elif inf == 3:  # debug_annotation_names
                        d = {k: v for k, _, v in fields(inv)}
                        arg_names[d[1]] = d[2].decode("utf-8")
            elif pf == 60:
                d = {}
                for tf, _, tv in fields(pv):
                    if tf in (3, 4):
                        sub = {k: v for k, _, v in fields(tv)}
                        d["pid"] = sub.get(1)
                        if tf == 4:
                            d["tid"] = sub.get(2)
                            d["name"] = sub.get(5, b"").decode("utf-8")
                        else:
                            d["name"] = sub.get(6, b"").decode("utf-8")
                    elif tf == 1:
                        d["uuid"] = tv
                    elif tf == 2:
                        d["name"] = tv.decode("utf-8")
                    elif tf == 5:
                        d["parent"] = tv
                    elif tf == 8:  # CounterDescriptor
                        d["counter"] = {k: v for k, _, v in fields(tv)}
                if "uuid" not in d:
                    fail("track descriptor without uuid")
                if "parent" in d and d["parent"] not in tracks:
                    fail("track %x has an unknown parent" % d["uuid"])
                tracks[d["uuid"]] = d
            elif pf == 11:
                ev = pv
        if ev is None:
            continue
        if seq != 1:
            fail("track event without trusted_packet_sequence_id")
        e = {"flow_out": [], "flow_in": [], "args": {}}
        for ef, ew, evv in fields(ev):
            if ef == 9:
                e["type"] = evv
            elif ef == 11:
                e["track"] = evv
            elif ef == 10:
                e["name_iid"] = evv
            elif ef == 30:
                e["counter_value"] = int64(evv)
            elif ef == 47:
                if ew != 1:
                    fail("flow_ids must be fixed64")
                e["flow_out"].append(evv)
            elif ef == 48:
                if ew != 1:
                    fail("terminating_flow_ids must be fixed64")
                e["flow_in"].append(evv)
            elif ef == 4:  # DebugAnnotation: name_iid, uint_value 3, int_value 4, string 6
                a = {k: v for k, _, v in fields(evv)}
                value = int64(a[4]) if 4 in a else a[3] if 3 in a else a.get(6, b"").decode("utf-8")
                e["args"][arg_names.get(a.get(1), a.get(1))] = value
        t = e.get("track")
        if t not in tracks:
            fail("event on undeclared track %r" % t)
        if ts is None:
            fail("event without timestamp")
        if ts < last_ts.get(t, 0):
            fail("timestamps go back on track %x" % t)
        last_ts[t] = ts
        typ = e.get("type")
        if (typ == 4) != ("counter" in tracks[t]):
            fail("event of type %r on %s track %x" % (typ, "a counter" if typ != 4 else "a slice", t))
        if typ in (1, 3):
            if e.get("name_iid") not in names:
                fail("event name iid %r not interned" % e.get("name_iid"))
        if typ == 1:
            open_.setdefault(t, []).append((ts, names[e["name_iid"]], e))
        elif typ == 2:
            if not open_.get(t):
                fail("slice end without begin on track %x" % t)
            start, name, be = open_[t].pop()
            slices.append({"track": t, "ts": start, "end": ts, "name": name,
                           "depth": len(open_[t]), "flow_out": be["flow_out"],
                           "flow_in": be["flow_in"], "args": be["args"]})
            flows_out.update(be["flow_out"])
            flows_in.update(be["flow_in"])
        elif typ == 3:
            instants.append({"track": t, "ts": ts, "name": names[e["name_iid"]]})
        elif typ == 4:
            if "counter_value" not in e:
                fail("counter event without counter_value on track %x" % t)
            counters.setdefault(t, []).append((ts, e["counter_value"]))
        else:
            fail("unknown event type %r" % typ)
    for t, st in open_.items():
        if st:
            fail("%d slices left open on track %x" % (len(st), t))
    if flows_out - flows_in:
        fail("%d flows start but never end" % len(flows_out - flows_in))
    return {"packets": packets, "tracks": tracks, "slices": slices, "instants": instants,
            "flows": len(flows_out), "counters": counters, "clock_snapshots": snapshots,
            "defaults": defaults, "packet_clocks": packet_clocks}


def check_json(path):
    doc = json.load(open(path, "rb"))
    evs = doc["traceEvents"]
    counts = {}
    flows_s, flows_f = set(), set()
    for e in evs:
        ph = e["ph"]
        counts[ph] = counts.get(ph, 0) + 1
        if ph == "X":
            if e["dur"] < 0:
                fail("negative duration")
            if not isinstance(e["name"], str):
                fail("name is not a string")
        elif ph == "s":
            flows_s.add(e["id"])
        elif ph == "f":
            flows_f.add(e["id"])
    if flows_s - flows_f:
        fail("%d flows start but never end" % len(flows_s - flows_f))
    return doc, counts


def check_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, strict=True))
    if not rows:
        fail("%s is empty" % path)
    n = len(rows[0])
    for i, r in enumerate(rows):
        if len(r) != n:
            fail("%s row %d has %d fields, header has %d" % (path, i, len(r), n))
    return rows


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    what, paths = sys.argv[1], sys.argv[2:]
    t0 = time.time()
    if what == "pftrace":
        r = decode_pftrace(paths[0])
        print("pftrace ok: %d packets, %d tracks, %d slices, %d instants, %d flows (%.2f s)"
              % (r["packets"], len(r["tracks"]), len(r["slices"]), len(r["instants"]),
                 r["flows"], time.time() - t0))
    elif what == "json":
        _, counts = check_json(paths[0])
        print("json ok: %s (%.2f s)" % (" ".join("%s=%d" % kv for kv in sorted(counts.items())),
                                        time.time() - t0))
    elif what == "csv":
        for p in paths:
            rows = check_csv(p)
            print("csv ok: %s: %d rows x %d columns" % (p, len(rows) - 1, len(rows[0])))
    else:
        fail("unknown check " + what)
    return 0


if __name__ == "__main__":
    sys.exit(main())
