#!/usr/bin/python3
"""p4ctl testbed: BMv2 simple_switch_grpc (or p4ctl's embedded or XDP switch) in Mininet.

Builds the topology `testbedctl topo` derived from mininet/testbed.yaml (see
mininet/README.md for the drawing and the port map): one client host per site,
one host per function server, all on one BMv2 switch running the p4ctl v1model
program — or, with --switch embedded, on `p4ctl switch`, the embedded target
(the Go model of the same program) with the same ports over AF_PACKET. No OpenFlow controller is involved: the switch is programmed over
P4Runtime by the product itself, `p4ctl push pipeline` (the P4 program) and
the controller daemon `p4ctl run --replay` (the tables of every carbon hour,
applied hitlessly while the load runs), both inside the switch's namespace.

Latency: every server host adds, on its replies toward each site, that site's
P95 round-trip time to the server's region times the latency scale (default
1). With one switch a link delay would be the same for every site, so the
delay is applied per destination prefix on the server's egress (tc prio +
u32 + netem); where the kernel has no sch_netem, `p4ctl serve --delay` adds the
same delay in the server before it replies.

Safety: BMv2 runs in the switch node's own network namespace (Mininet
inNamespace), its gRPC server on 127.0.0.1 there and its Thrift server
reachable only inside that namespace. Everything started is recorded in
OUT/pids and stopped in a finally block (also on SIGINT/SIGTERM); run.sh kills
any survivor by pid.

Run through `make mininet` (mininet/run.sh), not directly.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time

from mininet.log import info, setLogLevel
from mininet.net import Mininet
from mininet.node import Host, Switch

# Address hosts send to and expect from the switch: the service VIP and the
# switch's router MAC come from the topology JSON.
CPU_PORT = 510


class BMv2Switch(Switch):
    """simple_switch_grpc as a Mininet switch, in its own network namespace.

    Ports are the Mininet port numbers given to addLink (port2=...), which the
    topology takes from the p4ctl configuration, so BMv2 port N is interface
    <name>-ethN.
    """

    def __init__(self, name, bmv2=None, grpc_port=9559, thrift_port=9090,
                 device_id=1, log_path=None, pids=None, **params):
        params['inNamespace'] = True  # BMv2's Thrift server listens on all interfaces
        Switch.__init__(self, name, **params)
        self.bmv2 = bmv2
        self.grpc_port = grpc_port
        self.thrift_port = thrift_port
        self.device_id = device_id
        self.log_path = log_path
        self.pids = pids
        self.proc = None

    def start(self, controllers):
        self.cmd('ip link set dev lo up')
        args = [self.bmv2, '--no-p4', '--device-id', str(self.device_id),
                '--thrift-port', str(self.thrift_port)]
        for port, intf in sorted(self.intfs.items()):
            if intf.name == 'lo':
                continue
            disable_offloads(self, intf.name)
            args += ['-i', '%d@%s' % (port, intf.name)]
        args += ['--', '--grpc-server-addr', '127.0.0.1:%d' % self.grpc_port,
                 '--cpu-port', str(CPU_PORT)]
        log = open(self.log_path, 'w') if self.log_path else subprocess.DEVNULL
        self.proc = self.popen(args, stdout=log, stderr=subprocess.STDOUT)
        if self.pids:
            self.pids.add(self.proc.pid)
        info('*** %s: %s (pid %d)\n' % (self.name, ' '.join(args), self.proc.pid))

    def stop(self, deleteIntfs=True):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        Switch.stop(self, deleteIntfs)


class EmbeddedSwitch(BMv2Switch):
    """`p4ctl switch` (the embedded target) in BMv2's place: the same
    namespace, ports (-i PORT@INTF), device id, P4Runtime address and CPU
    port; no Thrift server (registers are read over P4Runtime)."""

    def start(self, controllers):
        self.cmd('ip link set dev lo up')
        args = [self.bmv2, 'switch', '--no-p4', '--device-id', str(self.device_id),
                '--grpc-addr', '127.0.0.1:%d' % self.grpc_port, '--cpu-port', str(CPU_PORT)]
        for port, intf in sorted(self.intfs.items()):
            if intf.name == 'lo':
                continue
            disable_offloads(self, intf.name)
            args += ['-i', '%d@%s' % (port, intf.name)]
        log = open(self.log_path, 'w') if self.log_path else subprocess.DEVNULL
        self.proc = self.popen(args, stdout=log, stderr=subprocess.STDOUT)
        if self.pids:
            self.pids.add(self.proc.pid)
        info('*** %s: %s (pid %d)\n' % (self.name, ' '.join(args), self.proc.pid))


class XDPSwitch(EmbeddedSwitch):
    """`p4ctl switch --datapath xdp`: the p4ctl program in the XDP data path
    of the switch's interfaces (docs/XDP.md). The hosts' interfaces keep GRO
    on (configure_host), without which a veth drops the frames XDP
    redirects into it."""

    def start(self, controllers):
        self.cmd('ip link set dev lo up')
        args = [self.bmv2, 'switch', '--datapath', 'xdp', '--no-p4', '--device-id', str(self.device_id),
                '--grpc-addr', '127.0.0.1:%d' % self.grpc_port, '--cpu-port', str(CPU_PORT)]
        for port, intf in sorted(self.intfs.items()):
            if intf.name == 'lo':
                continue
            args += ['-i', '%d@%s' % (port, intf.name)]
        log = open(self.log_path, 'w') if self.log_path else subprocess.DEVNULL
        self.proc = self.popen(args, stdout=log, stderr=subprocess.STDOUT)
        if self.pids:
            self.pids.add(self.proc.pid)
        info('*** %s: %s (pid %d)\n' % (self.name, ' '.join(args), self.proc.pid))


SWITCHES = {
    # name: (class, log file, what the summary calls it)
    'bmv2': (BMv2Switch, 'bmv2.log', 'simple_switch_grpc'),
    'embedded': (EmbeddedSwitch, 'switch.log', 'p4ctl switch (embedded target)'),
    'xdp': (XDPSwitch, 'switch.log', 'p4ctl switch --datapath xdp (XDP program)'),
}


class PidFile:
    """Every process the run starts, by pid, for run.sh's backstop cleanup."""

    def __init__(self, path):
        self.path = path
        open(path, 'w').close()

    def add(self, pid):
        with open(self.path, 'a') as f:
            f.write('%d\n' % pid)


def disable_offloads(node, intf):
    # veth checksum offload would hand BMv2 frames with unfinished UDP
    # checksums; the p4lang tutorials do the same.
    node.cmd('ethtool -K %s tx off rx off sg off tso off gso off gro off >/dev/null 2>&1' % intf)


def configure_host(h, intf, ip, peers, vip, switch_mac, gro=False):
    """Static addressing: no ARP crosses the P4 switch (it drops broadcast).

    Every host has its /32 and an on-link default route; neighbours are
    static: clients reach the VIP at the switch's MAC; servers reach each
    client at that client's own MAC, so replies (forwarded by l3_forward
    without MAC rewrite) arrive addressed to the client.
    """
    h.cmd('sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1')
    h.cmd('ip addr flush dev %s' % intf)
    h.cmd('ip addr add %s/32 dev %s' % (ip, intf))
    h.cmd('ip link set dev %s up' % intf)
    h.cmd('ip route replace default dev %s' % intf)
    h.cmd('ip neigh replace %s lladdr %s dev %s nud permanent' % (vip, switch_mac, intf))
    for peer_ip, peer_mac in peers:
        h.cmd('ip neigh replace %s lladdr %s dev %s nud permanent' % (peer_ip, peer_mac, intf))
    disable_offloads(h, intf)
    if gro:
        # An XDP switch redirects frames into this veth: it passes them on
        # only with GRO (or an XDP program) at this end.
        h.cmd('ethtool -K %s gro on >/dev/null 2>&1' % intf)


def netem_available(h, intf):
    out = h.cmd('tc qdisc add dev %s root netem delay 1ms 2>&1; echo rc=$?' % intf)
    h.cmd('tc qdisc del dev %s root 2>/dev/null' % intf)
    return out.strip().endswith('rc=0')


def netem_delays(h, intf, delays):
    """Per-destination-prefix delay on the host's egress: prio bands, one
    netem qdisc per site prefix, u32 filters on the destination."""
    bands = len(delays) + 1
    if bands > 16:
        raise SystemExit('too many sites for one prio qdisc (%d > 15)' % len(delays))
    default_band = bands - 1  # unmatched traffic: no delay
    priomap = ' '.join([str(default_band)] * 16)
    run(h, 'tc qdisc add dev %s root handle 1: prio bands %d priomap %s' % (intf, max(bands, 2), priomap))
    for k, d in enumerate(delays):
        run(h, 'tc qdisc add dev %s parent 1:%d handle %d: netem delay %.3fms limit 100000'
            % (intf, k + 1, 10 + k, d['delay_ms']))
        run(h, 'tc filter add dev %s parent 1: protocol ip prio 1 u32 match ip dst %s flowid 1:%d'
            % (intf, d['prefix'], k + 1))


def check_alive(procs):
    """Fail at once when a process the run depends on has exited."""
    for name, pr in procs:
        if pr is not None and pr.poll() is not None:
            raise SystemExit('%s exited (code %d) during the run' % (name, pr.returncode))


def wait_for_line(path, needle, timeout, proc=None, watch=()):
    """Readiness check: poll a process's output file for needle (and fail
    at once if the process, or one it depends on, exits first)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with open(path) as f:
                if needle in f.read():
                    return
        except FileNotFoundError:
            pass
        if proc is not None and proc.poll() is not None:
            raise SystemExit('%s exited (code %d) before it was ready; see %s' % (proc.args[1], proc.returncode, path))
        check_alive(watch)
        time.sleep(0.02)  # poll interval of the readiness check
    raise SystemExit('%s: no %r after %ds' % (path, needle.strip(), timeout))


def go_duration(s):
    """Seconds of a Go duration such as 120s, 2m or 1m30s."""
    units = {'ms': 0.001, 's': 1, 'm': 60, 'h': 3600}
    parts = re.findall(r'(\d+(?:\.\d+)?)(ms|s|m|h)', s)
    if not parts or ''.join(n + u for n, u in parts) != s:
        raise SystemExit('duration %r: want e.g. 120s or 2m' % s)
    return sum(float(n) * units[u] for n, u in parts)


def stop_proc(pr, timeout=15):
    """SIGTERM, then SIGKILL after timeout; returns the exit code."""
    if pr.poll() is None:
        pr.terminate()
        try:
            pr.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pr.kill()
            pr.wait()
    return pr.returncode


def run(node, cmd):
    out = node.cmd(cmd + ' 2>&1; echo rc=$?').strip()
    if not out.endswith('rc=0'):
        raise SystemExit('%s: %s failed: %s' % (node.name, cmd, out))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--topology', required=True, help='JSON from testbedctl topo')
    p.add_argument('--config', required=True, help='the testbed YAML (the controller configuration p4ctl run drives)')
    p.add_argument('--switch', choices=sorted(SWITCHES), default='bmv2',
                   help='bmv2: simple_switch_grpc (--bmv2); embedded: p4ctl switch (the p4ctl of --bin); xdp: p4ctl switch --datapath xdp')
    p.add_argument('--bmv2', help='simple_switch_grpc (--switch bmv2)')
    p.add_argument('--p4info', required=True)
    p.add_argument('--bmv2-json', required=True)
    p.add_argument('--bin', required=True, help='directory with p4ctl and testbedctl')
    p.add_argument('--out', required=True)
    p.add_argument('--hour', required=True, help='first carbon hour of the replay (RFC 3339)')
    p.add_argument('--hours', type=int, default=4,
                   help='carbon hours the replay covers during the load (0: stay in --hour)')
    p.add_argument('--grace', default='1s', help="p4ctl run --grace (old generation kept after a flip)")
    p.add_argument('--duration', default='120s')
    p.add_argument('--rate', default='50', help='requests/s per client')
    p.add_argument('--exec-mix', default='0:100')
    p.add_argument('--grpc-port', type=int, default=9559)
    p.add_argument('--delay-mode', choices=['auto', 'netem', 'serve'], default='auto')
    args = p.parse_args()

    setLogLevel('info')
    topo = json.load(open(args.topology))
    scale = topo['latency_scale']
    vip, switch_mac = topo['service'], topo['switch_mac']
    p4ctl = os.path.join(args.bin, 'p4ctl')
    ctl = os.path.join(args.bin, 'testbedctl')
    pids = PidFile(os.path.join(args.out, 'pids'))

    # SIGINT, SIGTERM and SIGHUP tear down (installed explicitly: run.sh
    # starts this script in the background, where SIGINT is ignored).
    def interrupted(signum, _frame):
        raise KeyboardInterrupt('signal %d' % signum)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupted)

    cls, log_name, switch_name = SWITCHES[args.switch]
    binary = p4ctl if args.switch in ('embedded', 'xdp') else args.bmv2
    if not binary:
        sys.stderr.write('p4ctl_topo: --switch bmv2 needs --bmv2\n')
        return 2
    net = Mininet(topo=None, controller=None, build=False, autoSetMacs=False, autoStaticArp=False)
    procs = []
    daemon = None
    sw = None
    code = 1
    try:
        sw = net.addSwitch('p4s1', cls=cls, bmv2=binary, grpc_port=args.grpc_port,
                           log_path=os.path.join(args.out, log_name), pids=pids)
        hosts = {}
        # Ports (switch side) come from the configuration; see README port map.
        for c in topo['clients']:
            h = net.addHost(c['name'], cls=Host, ip=None, mac=c['mac'])
            net.addLink(h, sw, port2=c['port'], addr1=c['mac'])
            hosts[c['name']] = (h, c)
        for s in topo['servers']:
            h = net.addHost(s['name'], cls=Host, ip=None, mac=s['mac'])
            net.addLink(h, sw, port2=s['port'], addr1=s['mac'])
            hosts[s['name']] = (h, s)
        net.build()
        for h in net.hosts:
            pids.add(h.pid)
        pids.add(sw.pid)

        clients = [(c['ip'], c['mac']) for c in topo['clients']]
        for name, (h, spec) in hosts.items():
            intf = h.defaultIntf().name
            configure_host(h, intf, spec['ip'], clients if 'server_id' in spec else [], vip, switch_mac,
                           gro=args.switch == 'xdp')

        sw.start([])
        grpc = '127.0.0.1:%d' % args.grpc_port
        # Readiness: poll P4Runtime inside the switch's namespace (no sleeps).
        run(sw, '%s wait -grpc %s -timeout 60s' % (ctl, grpc))
        # The product programs the switch: the P4 program first ...
        out = run(sw, '%s push pipeline --grpc-addr %s --device-id 1 --election-id 1 --p4info %s --device-config %s'
                  % (p4ctl, grpc, args.p4info, args.bmv2_json))
        info(out.rsplit('rc=', 1)[0])
        # ... then the controller daemon replays the carbon hours, one per
        # duration/hours seconds, for the whole run (stopped at the end).
        duration_s = go_duration(args.duration)
        speed = args.hours * 3600.0 / duration_s if args.hours > 0 else 1.0
        daemon_log = os.path.join(args.out, 'p4ctl-run.jsonl')
        dcmd = [p4ctl, 'run', '--config', args.config, '--replay', args.hour, '--speed', '%gx' % speed, '--hours', '0',
                '--grace', args.grace, '--log-format', 'json', '--metrics-addr', '127.0.0.1:9464']
        daemon = sw.popen(dcmd, stdout=open(daemon_log, 'w'), stderr=subprocess.STDOUT)
        pids.add(daemon.pid)
        info('*** p4ctl run (pid %d): %s\n' % (daemon.pid, ' '.join(dcmd[1:])))
        # Ready when the first hour's tables are on the switch.
        bmv2 = ('%s (see %s)' % (switch_name, os.path.join(args.out, log_name)), sw.proc)
        wait_for_line(daemon_log, '"msg":"pushed"', 60, daemon, [bmv2])
        info('*** p4ctl run pushed %s; %s per hour of carbon data\n' % (
            args.hour, ('%.1fs' % (3600.0 / speed)) if args.hours > 0 else 'real time'))

        first = hosts[topo['servers'][0]['name']][0]
        mode = args.delay_mode
        if mode == 'auto':
            mode = 'netem' if netem_available(first, first.defaultIntf().name) else 'serve'
        info('*** latency: site→region P95 × %g, applied by %s\n' % (
            scale, 'tc netem on server egress' if mode == 'netem' else 'p4ctl serve --delay (no sch_netem in this kernel)'))

        site_ids = {c['site']: c['site_id'] for c in topo['clients']}
        for s in topo['servers']:
            h = hosts[s['name']][0]
            cmd = [p4ctl, 'serve', '--server-id', str(s['server_id']), '--addr', '0.0.0.0:9800',
                   '--timing',  # report queue/exec/delay times in every reply
                   '--log', os.path.join(args.out, 'serve-%s.jsonl' % s['name'])]
            # exec classes: the configuration's costs × the latency scale
            for e in topo['exec_classes']:
                cmd += ['--exec-class', '%d=exp:%gus' % (e['class'], e['mean_us'])]
            if mode == 'netem':
                netem_delays(h, h.defaultIntf().name, s['delays'])
            else:
                for d in s['delays']:
                    cmd += ['--delay', '%d=%.3fms' % (site_ids[d['site']], d['delay_ms'])]
            pr = h.popen(cmd, stdout=open(os.path.join(args.out, 'serve-%s.out' % s['name']), 'w'),
                         stderr=subprocess.STDOUT)
            pids.add(pr.pid)
            procs.append(pr)
        # Servers are up when they have said so (their socket is bound).
        for s in topo['servers']:
            wait_for_line(os.path.join(args.out, 'serve-%s.out' % s['name']), ' on udp ', 20, watch=[bmv2])

        info('*** loadgen: %s per client at %s req/s from %d clients\n' % (
            args.duration, args.rate, len(topo['clients'])))
        gens = []
        for i, c in enumerate(topo['clients']):
            h = hosts[c['name']][0]
            cmd = [p4ctl, 'loadgen', '--target', vip, '--rate', args.rate, '--duration', args.duration,
                   '--sla-scale', str(scale), '--exec-mix', args.exec_mix, '--seed', str(i + 1),
                   '--first-id', str((i + 1) << 24), '--no-progress',
                   '--json', os.path.join(args.out, 'loadgen-%s.json' % c['name'])]
            pr = h.popen(cmd, stdout=open(os.path.join(args.out, 'loadgen-%s.txt' % c['name']), 'w'),
                         stderr=subprocess.STDOUT)
            pids.add(pr.pid)
            procs.insert(0, pr)  # stopped first on teardown
            gens.append((c['name'], pr))
        start = last = time.time()
        while True:
            running = [pr for _, pr in gens if pr.poll() is None]
            if not running:
                break
            # The switch and the daemon must stay up for the whole load.
            check_alive([bmv2, ('p4ctl run (see %s)' % daemon_log, daemon)])
            try:
                running[0].wait(timeout=1)
            except subprocess.TimeoutExpired:
                if time.time() - last >= 10:
                    last = time.time()
                    info('*** %.0fs elapsed\n' % (last - start))
        failed = [n for n, pr in gens if pr.returncode != 0]
        if failed:
            raise SystemExit('loadgen failed on %s (see %s/loadgen-*.txt)' % (', '.join(failed), args.out))
        if daemon.poll() is not None:
            raise SystemExit('p4ctl run exited (code %d) during the load; see %s' % (daemon.returncode, daemon_log))
        rc = stop_proc(daemon)
        if rc != 0:
            raise SystemExit('p4ctl run exited with code %d when stopped; see %s' % (rc, daemon_log))
        info('*** p4ctl run stopped\n')
        # register reads BMv2's P4Runtime lacks go over its Thrift API (pkg/bmv2rt)
        out = run(sw, '%s state -grpc 127.0.0.1:%d -servers %d -thrift-addr 127.0.0.1:9090' % (ctl, args.grpc_port, len(topo['servers'])))
        state = out.rsplit('rc=', 1)[0]
        open(os.path.join(args.out, 'switch-state.txt'), 'w').write(state)
        info(state)
        code = 0
    except KeyboardInterrupt as e:
        info('\n*** interrupted (%s): tearing down\n' % e)
        code = 130
    except SystemExit as e:
        sys.stderr.write('p4ctl_topo: %s\n' % e)
        code = 1
    finally:
        # Teardown is not interrupted by a second signal.
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        if daemon is not None:
            stop_proc(daemon)
        for pr in procs:
            if pr.poll() is None:
                pr.terminate()
        for pr in procs:
            try:
                pr.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pr.kill()
        # The switch goes before its links: Mininet deletes the links first,
        # and a switch that loses an interface reports it as an error.
        if sw is not None and sw.proc is not None:
            stop_proc(sw.proc, timeout=10)
        net.stop()
    return code


if __name__ == '__main__':
    sys.exit(main())
