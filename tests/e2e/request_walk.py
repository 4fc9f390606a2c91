"""Walks `uring-trace dump` output of tests/e2e/requests.ut's trace, request
by request: each flow and span is matched with its own request's user_data
(a flow point's is the instant its thread wrote just before it; a span's
begin carries user_data and its end done).  test_losses and test_shed ask
whether losses and shedding leave requests whole."""
import re

ARG = re.compile(r'(user_data|done): u?int64 (\d+)')
EVENT = re.compile(r'event (\w+) ts=\d+ pid=(\d+) tid=(\d+)')
FLOW_ID = re.compile(r'event flow_(begin|end) ts=\d+ pid=\d+ tid=\d+ .* id=(\d+)$')


class Walk:
    def __init__(self, dump_path, marker):
        self.marks = 0               # lines naming the marker ("events lost", "requests shed")
        self.flows_whole = self.spans_whole = 0
        self.wrong = 0               # ends with another request's user_data
        self.flow_ends_without_begin = self.span_ends_without_begin = 0
        last_instant = {}            # (pid, tid) -> user_data of its last instant
        self.open_flows = {}         # flow id -> user_data at its begin
        self.open_spans = {}         # (pid, tid) of a lane -> user_data of its open span
        for line in open(dump_path):
            if marker in line:
                self.marks += 1
            m = EVENT.search(line)
            if not m:
                continue
            kind, thread = m.group(1), (m.group(2), m.group(3))
            a = ARG.search(line)
            if kind == 'instant':
                last_instant[thread] = a.group(2) if a else None
            elif kind in ('flow_begin', 'flow_end'):
                fid, ud = FLOW_ID.search(line).group(2), last_instant.get(thread)
                if kind == 'flow_begin':
                    self.open_flows[fid] = ud
                elif fid not in self.open_flows:
                    self.flow_ends_without_begin += 1
                else:
                    self.flows_whole += 1
                    self.wrong += self.open_flows.pop(fid) != ud
            elif kind == 'duration_begin' and a and a.group(1) == 'user_data':
                self.open_spans[thread] = a.group(2)
            elif kind == 'duration_end' and a and a.group(1) == 'done':
                if thread not in self.open_spans:
                    self.span_ends_without_begin += 1
                else:
                    self.spans_whole += 1
                    self.wrong += self.open_spans.pop(thread) != a.group(2)
