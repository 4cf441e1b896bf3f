// What `nanolet --help` and every command's `--help` print.

export const USAGE = `Usage:
  nanolet run [flags]      run the node agent
  nanolet pods [flags]     list the pods of a running (or the last) agent
  nanolet sim [flags]      run the core on a simulated node (see nanolet sim --help)
  nanolet version          this build's version
  nanolet install [--root DIR] [--no-enable] [--now]
                           put this artifact in place as a systemd service (root; see docs/running.md)
  nanolet uninstall [--root DIR] [--purge]
                           take it out again (--purge: its config and state too)

Flags of run (a flag given wins over the same setting in --config):
  --config FILE                      a KubeletConfiguration (kubelet.config.k8s.io/v1beta1) file; its
                                     fields default as the kubelet's do (see docs/running.md)
  --pod-manifest-path DIR            static pod manifests (default /etc/kubernetes/manifests)
  --container-runtime-endpoint URL   CRI socket (default unix:///run/containerd/containerd.sock)
  --hostname-override NAME           node name (default: the host name)
  --root-dir DIR                     agent state and control socket (default /var/lib/nanolet)
  --pod-logs-dir DIR                 container logs (default /var/log/pods)
  --relist-period DURATION           PLEG relist period (default 1s)
  --v LEVEL                          log level: debug, info, warn, error (default info)
  --kubeconfig FILE                  join the cluster this kubeconfig names, as node
                                     system:node:<name> (without it: static pods only)
  --bootstrap-kubeconfig FILE        without a usable --kubeconfig (none yet, or its certificate
                                     expired): get a client certificate by a CSR with these
                                     credentials and write --kubeconfig to use it (TLS bootstrap)
  --rotate-certificates              request a new client certificate at 70-90% of its life
  --node-ip IP[,IP]                  the node's InternalIP, or a dual-stack pair (one IPv4, one
                                     IPv6; default: the first IPv4 address)
  --provider-id ID                   the Node's spec.providerID (set when it registers)
  --eviction-hard LIST               hard eviction thresholds (default
                                     memory.available<100Mi,nodefs.available<10%,
                                     nodefs.inodesFree<5%,imagefs.available<15%,
                                     imagefs.inodesFree<5%)
  --eviction-soft LIST               soft thresholds, each with a grace period (default none)
  --eviction-soft-grace-period LIST  e.g. memory.available=1m30s
  --eviction-minimum-reclaim LIST    e.g. memory.available=0Mi,nodefs.available=500Mi
  --eviction-pressure-transition-period DURATION  how long a pressure condition stays (default 5m)
  --eviction-max-pod-grace-period SECONDS  grace for pods evicted under soft thresholds (default 0)
  --eviction-monitoring-interval DURATION  stats pass and eviction interval (default 10s)
  --imagefs-path DIR                 the runtime's image store, for imagefs.* (default /var/lib/containerd)
  --image-gc-high-threshold PERCENT  image filesystem use at which unused images go (default 85;
                                     100 turns periodic image GC off)
  --image-gc-low-threshold PERCENT   images go until use is down to this (default 80)
  --minimum-image-ttl-duration DURATION  an image seen more recently stays (default 2m)
  --image-gc-period DURATION         how often images are collected (nanolet's own; default 5m)
  --pod-infra-container-image IMAGE  never removed by image GC (the runtime's sandbox image is
                                     found by itself)
  --serialize-image-pulls[=false]    one pull at a time (default true)
  --system-reserved RES=QTY,...      kept for the OS (cpu=500m,memory=1Gi,...): out of allocatable
  --kube-reserved RES=QTY,...        kept for the node agent and runtime: out of allocatable
  --reserved-cpus CPUSET             CPUs kept for the system (replaces both reservations' cpu)
  --enforce-node-allocatable LIST    pods (default): kubepods is limited to capacity less reservations
  --cgroup-root DIR                  cgroup file system (default /sys/fs/cgroup)
  --manifest-url URL                 static pods also from this web server: a Pod, several, or a
                                     PodList, YAML or JSON; its last good answer is kept
  --manifest-url-header NAME:VALUE,...  headers for it (repeatable)
  --http-check-frequency DURATION    how often the URL is fetched (default 20s)
  --logind-conf-dir DIR              where a drop-in raises logind's InhibitDelayMaxSec for
                                     graceful shutdown (nanolet's own; default
                                     /etc/systemd/logind.conf.d)
  --max-pods N                       pods this node runs at most; more are refused as OutOfpods
                                     (default 110)
  --port N                           the kubelet API (HTTPS: logs, exec, attach, port-forward,
                                     pods, stats, metrics); 0 turns it off (default 10250)
  --address IP                       where the kubelet API listens (default 0.0.0.0)
  --tls-cert-file FILE               its serving certificate; without it and --tls-private-key-file,
  --tls-private-key-file FILE        a self-signed one in --cert-dir (kubelet.crt, kubelet.key)
  --cert-dir DIR                     default <root-dir>/pki
  --config-map-and-secret-change-detection-strategy Watch|Cache|Get
                                     how configMaps and secrets of pods are kept up to date
                                     (Watch: one watch per object; Cache: a GET kept 1 min;
                                     Get: a GET each time; default Watch)
  --client-ca-file FILE              client certificates signed by this CA authenticate (CN user,
                                     O groups)
  --authentication-token-webhook     bearer tokens authenticate by the apiserver's TokenReview
  --anonymous-auth                   requests without an identity are system:anonymous (default
                                     off: 401)
  --authorization-mode MODE          Webhook (SubjectAccessReview; the default with --kubeconfig)
                                     or AlwaysAllow (the default without)
  --healthz-port N                   plain-HTTP /healthz; 0 turns it off (default 10248)
  --healthz-bind-address IP          default 127.0.0.1
  --read-only-port N                 unauthenticated plain HTTP with the read-only endpoints; off
                                     unless set (default 0)
  --container-log-max-size SIZE      a container's log is rotated past this (default 10Mi)
  --container-log-max-files N        log files kept per container, the live one included
                                     (default 5; older ones are gzipped)
  --container-log-monitor-interval DURATION  how often log sizes are checked (default 10s)
  --cluster-dns IP[,IP]              the cluster's DNS servers, for ClusterFirst pods (none: such
                                     pods fall back to the node's resolv.conf, with an event)
  --cluster-domain DOMAIN            the cluster's domain (search paths, subdomain hostnames)
  --resolv-conf FILE                 the node's resolver config for Default pods (default
                                     /etc/resolv.conf; "" for none)
  --allowed-unsafe-sysctls LIST      sysctls (or prefixes ending in *) pods may set beyond the safe
                                     ones; others are refused as SysctlForbidden
  --record FILE                      write every input the core is given to FILE (a trace for
                                     'nanolet sim --replay'); stops at 256 MiB

Flags of pods:
  --root-dir DIR                     as given to run
  -o json                            print JSON instead of a table
`;

/** `--help` or `-h` anywhere in a subcommand's flags: the usage, and exit 0. */
export function wantsHelp(argv: string[]): boolean {
  return argv.includes("--help") || argv.includes("-h");
}
