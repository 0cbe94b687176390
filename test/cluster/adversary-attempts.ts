// The scripted agent's attempts against its driver (test/cluster/driver-identity.test.ts): each is one shell command
// the harness (uid 1000) runs through gg's shell tool, printing `key=value` lines the test reads back from the tool
// result the model got. /proc/1 is the driver: the container is the run's alone. Add an attempt here and an `it`
// there that reads reportOf(<name>).
import { CREDENTIALS_MOUNT, NATS_CREDS_PATH } from '../../dispatcher/pods/driver-pod.ts';

/** The capabilities' bits in /proc/<pid>/status masks (linux/capability.h). */
const CAP_BITS: Record<string, number> = { CHOWN: 0, DAC_OVERRIDE: 1, FOWNER: 3, KILL: 5, SETGID: 6, SETUID: 7 };
export const capabilityMask = (caps: readonly string[]) => caps.reduce((m, c) => m | (1n << BigInt(CAP_BITS[c]!)), 0n).toString(16).padStart(16, '0');
export const ZERO = '0000000000000000';
/** `<Field>:<value>` lines of a status file as `<prefix>.<Field>=<value>`. */
const status = (file: string, prefix: string) => `sed -n 's/^\\(Uid\\|Gid\\|Groups\\|CapInh\\|CapPrm\\|CapEff\\|CapBnd\\|CapAmb\\|NoNewPrivs\\|Seccomp\\):[[:space:]]*\\(.*\\)$/${prefix}.\\1=\\2/p' ${file} | sed 's/[[:space:]]*$//'`;
/** Runs a command, printing `<key>.exit=<code>` and its first error line as `<key>.error=<text>`. */
const tryIt = (key: string, command: string) => `${command} >/dev/null 2>/tmp/${key}.err; echo "${key}.exit=$?"; head -n 1 /tmp/${key}.err | sed 's/^/${key}.error=/'`;

export interface Attempt {
  name: string;
  /** Shell run by the harness (uid 1000) as one tool call; /proc/1 is the driver. */
  script: string;
}

export const ATTEMPTS: Attempt[] = [
  {
    name: 'identity',
    script: [
      `tr '\\0' ' ' < /proc/1/cmdline | sed 's/^/driver.cmdline=/'; echo`,
      status('/proc/1/status', 'driver'),
      status('/proc/self/status', 'shell'),
      'if touch /probe-write 2>/dev/null; then echo shell.rootfs=writable; else echo shell.rootfs=readonly; fi',
      'if [ -e /var/run/secrets/kubernetes.io/serviceaccount/token ]; then echo shell.token=present; else echo shell.token=absent; fi',
      `env | sed -n 's/^\\(TCAB_[A-Z0-9_]*\\)=.*/\\1/p' | sort | tr '\\n' ' ' | sed 's/^/shell.tcabVariables=/'; echo`,
    ].join('\n'),
  },
  { name: 'environ', script: [tryIt('environ', 'cat /proc/1/environ'), tryIt('cwd', 'ls /proc/1/cwd/'), tryIt('fd', 'ls /proc/1/fd/')].join('\n') },
  { name: 'memory', script: [tryIt('mem', 'head -c 1 /proc/1/mem'), tryIt('maps', 'cat /proc/1/maps')].join('\n') },
  {
    name: 'credential',
    script: [
      tryIt('creds', `cat ${NATS_CREDS_PATH}`),
      `stat -L -c '%a %u %g' ${NATS_CREDS_PATH} | sed 's/^/creds.stat=/'`,
      // The harness's subscription Secret: the driver copies what the harness needs into its HOME, nothing more.
      tryIt('subscription', `cat ${CREDENTIALS_MOUNT}/credentials.json`),
      `stat -L -c '%a %u %g' ${CREDENTIALS_MOUNT}/credentials.json | sed 's/^/subscription.stat=/'`,
    ].join('\n'),
  },
  { name: 'signal', script: [tryIt('term', 'kill -TERM 1'), tryIt('kill', 'kill -KILL 1'), tryIt('stop', 'kill -STOP 1')].join('\n') },
  {
    // No debugger in the image: perl's syscall() (perl-base is part of Debian's minimal system) calls
    // ptrace(PTRACE_ATTACH=16, 1) itself; the syscall's number is the architecture's.
    name: 'ptrace',
    script: `n=$(case "$(uname -m)" in (x86_64) echo 101;; (aarch64) echo 117;; esac); perl -e '$r = syscall($ARGV[0], 16, 1, 0, 0); printf "ptrace.result=%d\\nptrace.errno=%d\\n", $r, $!+0' "$n"`,
  },
  {
    // Not an attack on the driver, but what the driver must still clean up without reading other uids' environs
    // (no SYS_PTRACE): a daemon in its own session, which the signal to the harness's group never reaches.
    name: 'daemon',
    script: `setsid sleep 600 </dev/null >/dev/null 2>&1 &\necho "daemon.pid=$!"`,
  },
  {
    // Sticky directories (HOME itself too): only a file's or directory's owner, or CAP_FOWNER, may remove or
    // replace the run user's files in them; the driver's teardown still removes everything.
    name: 'sticky',
    script: 'mkdir -p sticky/deeper && touch sticky/f sticky/deeper/g "$HOME/h" && chmod 1777 sticky sticky/deeper && chmod +t "$HOME" && echo sticky.made=yes',
  },
];

// NATS attempts (issue 22), for a NATS with authentication on (the installed chart's: test/e2e/helm-real-node.test.ts;
// driver-identity.test.ts's server has none, so there they would succeed). The agent has a shell and node, no NATS
// client and no credential: nats-probe.mjs speaks the NATS text protocol over a TCP socket itself (CONNECT, then
// the attempt's PUB/SUB lines, then PING) and prints what the server answered and who closed the socket.

/** Where the run's workspace (the Run's testCase files) holds the agent's attempts and its NATS client. */
export const ADVERSARY_DIR = '.adversary';
/** The scripted model's command: whatever attempts the workspace holds (none: a normal run, nothing printed but that). */
export const RUN_ATTEMPTS_COMMAND = `if [ -f ${ADVERSARY_DIR}/attempts.sh ]; then sh ${ADVERSARY_DIR}/attempts.sh; else echo adversary=none; fi`;

/** `node nats-probe.mjs <host> <port> <key> <base64 JSON array of protocol lines>`: prints `<key>.<field>=<value>`. */
const NATS_PROBE = String.raw`import { connect } from 'node:net';
const [host, port, key, encoded] = process.argv.slice(2);
const lines = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'));
const say = (field, value) => process.stdout.write(key + '.' + field + '=' + value + '\n');
const replies = [];
let buffered = '';
let sent = false;
let hungUp = false;
const socket = connect(Number(port), host);
// PONG answers the last line: the server took everything before it, so the agent is done and hangs up. A server
// that neither answers nor closes is given up on.
const timer = setTimeout(() => { hungUp = true; socket.destroy(); }, 15000);
socket.on('data', (chunk) => {
  buffered += chunk.toString('utf8');
  for (let at = buffered.indexOf('\r\n'); at >= 0; at = buffered.indexOf('\r\n')) {
    const line = buffered.slice(0, at);
    buffered = buffered.slice(at + 2);
    if (line.startsWith('INFO ') && !sent) {
      say('authRequired', String(JSON.parse(line.slice(5)).auth_required === true));
      sent = true;
      socket.write(lines.join('\r\n') + '\r\n');
    } else {
      replies.push(line);
      if (line === 'PONG') { hungUp = true; socket.end(); }
    }
  }
});
socket.on('error', (error) => say('socketError', error.code ?? error.message));
socket.on('close', () => {
  clearTimeout(timer);
  say('sent', String(sent));
  say('replies', replies.join(' | '));
  say('closedBy', hungUp ? 'agent' : 'server');
});
`;

export interface NatsTarget {
  /** The NATS Service address the driver is given (host of TCAB_NATS_URL), and its port. */
  host: string;
  port: number;
  /** The protocol lines after CONNECT for each NATS attempt, by attempt name (PUB/SUB; PING is added). */
  attempts: Record<string, string[]>;
}

/** `PUB <subject> <bytes>` and its payload, as two protocol lines. */
export const pub = (subject: string, payload: string): string[] => [`PUB ${subject} ${Buffer.byteLength(payload)}`, payload];

/** Each NATS attempt as a shell command running nats-probe.mjs: CONNECT with no credential, its lines, PING. */
export function natsAttempts(target: NatsTarget): Attempt[] {
  const connectLine = `CONNECT ${JSON.stringify({ verbose: true, pedantic: false, name: 'agent', lang: 'node', version: '0', protocol: 1, headers: true })}`;
  return Object.entries(target.attempts).map(([name, lines]) => {
    const encoded = Buffer.from(JSON.stringify([connectLine, ...lines, 'PING'])).toString('base64');
    return { name, script: `node ${ADVERSARY_DIR}/nats-probe.mjs ${target.host} ${target.port} ${name} ${encoded}` };
  });
}

/** The Run's testCase files: the attempts as one script (each headed `attempt=<name>`) and the NATS client. */
export function adversaryFiles(attempts: readonly Attempt[]): { path: string; content: string }[] {
  const script = attempts.map((a) => `echo attempt=${a.name}\n${a.script}`).join('\n');
  return [
    { path: `${ADVERSARY_DIR}/attempts.sh`, content: `${script}\n` },
    { path: `${ADVERSARY_DIR}/nats-probe.mjs`, content: NATS_PROBE },
  ];
}

/** One shell output holding several attempts (`attempt=<name>` heads each) as key=value maps by attempt name. */
export function reportsOf(output: string): Map<string, Map<string, string>> {
  const reports = new Map<string, Map<string, string>>();
  let current: Map<string, string> | undefined;
  for (const line of output.split('\n')) {
    if (line.startsWith('attempt=')) reports.set(line.slice('attempt='.length), (current = new Map()));
    else if (current && line.includes('=')) current.set(line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1));
  }
  return reports;
}
