#!/usr/bin/python3
"""p4ctl testbed: BMv2 simple_switch_grpc in Mininet.

Builds the topology `testbedctl topo` derived from mininet/testbed.yaml (see
mininet/README.md for the drawing and the port map): one client host per site,
one host per function server, all on one BMv2 switch running the p4ctl v1model
program. No OpenFlow controller is involved: the switch is programmed over
P4Runtime by `testbedctl push` (the stand-in for `p4ctl push pipeline` and
`p4ctl run --replay`).

Latency: every server host adds, on its replies toward each site, that site's
P95 round-trip time to the server's region times the latency scale (default
1/10). With one switch a link delay would be the same for every site, so the
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


def configure_host(h, intf, ip, peers, vip, switch_mac):
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


def wait_for_line(path, needle, timeout):
    """Readiness check: poll a process's output file for needle."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if needle in open(path).read():
                return
        except FileNotFoundError:
            pass
        time.sleep(0.02)  # poll interval of the readiness check
    raise SystemExit('%s: no %r after %ds' % (path, needle.strip(), timeout))


def run(node, cmd):
    out = node.cmd(cmd + ' 2>&1; echo rc=$?').strip()
    if not out.endswith('rc=0'):
        raise SystemExit('%s: %s failed: %s' % (node.name, cmd, out))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--topology', required=True, help='JSON from testbedctl topo')
    p.add_argument('--config', required=True, help='the testbed YAML (for testbedctl push)')
    p.add_argument('--bmv2', required=True)
    p.add_argument('--p4info', required=True)
    p.add_argument('--bmv2-json', required=True)
    p.add_argument('--bin', required=True, help='directory with p4ctl and testbedctl')
    p.add_argument('--out', required=True)
    p.add_argument('--hour', required=True)
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

    # SIGTERM/SIGHUP tear down like Ctrl-C does.
    def interrupted(signum, _frame):
        raise KeyboardInterrupt('signal %d' % signum)
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGHUP, interrupted)

    net = Mininet(topo=None, controller=None, build=False, autoSetMacs=False, autoStaticArp=False)
    procs = []
    code = 1
    try:
        sw = net.addSwitch('p4s1', cls=BMv2Switch, bmv2=args.bmv2, grpc_port=args.grpc_port,
                           log_path=os.path.join(args.out, 'bmv2.log'), pids=pids)
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
            configure_host(h, intf, spec['ip'], clients if 'server_id' in spec else [], vip, switch_mac)

        sw.start([])
        # Readiness: poll P4Runtime inside the switch's namespace (no sleeps).
        run(sw, '%s wait -grpc 127.0.0.1:%d -timeout 60s' % (ctl, args.grpc_port))
        out = run(sw, '%s push -config %s -hour %s -grpc 127.0.0.1:%d -p4info %s -device-config %s'
                  % (ctl, args.config, args.hour, args.grpc_port, args.p4info, args.bmv2_json))
        info(out.rsplit('rc=', 1)[0])

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
                   # exec classes: the configuration's costs × the latency scale
                   '--exec-class', '0=exp:%gus' % (1000 * scale), '--exec-class', '1=exp:%gus' % (10000 * scale),
                   '--exec-class', '2=exp:%gus' % (100000 * scale),
                   '--log', os.path.join(args.out, 'serve-%s.jsonl' % s['name'])]
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
            wait_for_line(os.path.join(args.out, 'serve-%s.out' % s['name']), ' on udp ', 20)

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
            gens.append((c['name'], pr))
        start = time.time()
        while True:
            running = [pr for _, pr in gens if pr.poll() is None]
            if not running:
                break
            try:
                running[0].wait(timeout=10)
            except subprocess.TimeoutExpired:
                info('*** %.0fs elapsed\n' % (time.time() - start))
        failed = [n for n, pr in gens if pr.returncode != 0]
        if failed:
            raise SystemExit('loadgen failed on %s (see %s/loadgen-*.txt)' % (', '.join(failed), args.out))
        out = run(sw, '%s state -grpc 127.0.0.1:%d -servers %d' % (ctl, args.grpc_port, len(topo['servers'])))
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
        for pr in procs:
            if pr.poll() is None:
                pr.terminate()
        for pr in procs:
            try:
                pr.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pr.kill()
        net.stop()
    return code


if __name__ == '__main__':
    sys.exit(main())
