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
