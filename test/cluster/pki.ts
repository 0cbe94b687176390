// Certificates for the test control plane, made with the openssl CLI: one CA, the apiserver's serving cert
// (valid for loopback and the in-cluster names), client certs per component (their CN/O are the identities
// RBAC and the Node authorizer know) and the service-account signing key pair.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ClientCert {
  cert: string;
  key: string;
}

export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
  client(name: string): ClientCert;
}

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });

function keyPair(path: string): void {
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', path]);
}

function signed(dir: string, name: string, subject: string, ca: { cert: string; key: string }, ext: string): ClientCert {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.crt`);
  const extFile = join(dir, `${name}.ext`);
  keyPair(key);
  writeFileSync(extFile, ext);
  openssl(['req', '-new', '-key', key, '-subj', subject, '-out', csr]);
  openssl(['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-days', '7', '-sha256', '-extfile', extFile, '-out', cert]);
  return { cert, key };
}

const CLIENT_EXT = 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n';

/** `serviceIps`: the apiserver's addresses as a Service (the `kubernetes` Service's ClusterIP), named in its certificate. */
export function createPki(dir: string, identities: Record<string, { user: string; groups?: string[] }>, serviceIps: string[] = []): Pki {
  const caKey = join(dir, 'ca.key');
  const caCert = join(dir, 'ca.crt');
  keyPair(caKey);
  openssl(['req', '-x509', '-new', '-key', caKey, '-subj', '/CN=tcab-test-cluster-ca', '-days', '7', '-sha256', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature', '-out', caCert]);
  const ca = { cert: caCert, key: caKey };
  const sans = ['IP:127.0.0.1', 'IP:0:0:0:0:0:0:0:1', ...serviceIps.map((ip) => `IP:${ip}`), 'DNS:localhost', 'DNS:kubernetes', 'DNS:kubernetes.default', 'DNS:kubernetes.default.svc', 'DNS:kubernetes.default.svc.cluster.local'];
  const server = signed(dir, 'apiserver', '/CN=kube-apiserver', ca, `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=${sans.join(',')}\n`);
  const clients = new Map<string, ClientCert>();
  for (const [name, identity] of Object.entries(identities)) {
    const subject = `${(identity.groups ?? []).map((g) => `/O=${g}`).join('')}/CN=${identity.user}`;
    clients.set(name, signed(dir, name, subject, ca, CLIENT_EXT));
  }
  const serviceAccountKey = join(dir, 'sa.key');
  const serviceAccountPub = join(dir, 'sa.pub');
  openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', serviceAccountKey]);
  openssl(['pkey', '-in', serviceAccountKey, '-pubout', '-out', serviceAccountPub]);
  return {
    dir,
    caCert,
    caKey,
    serverCert: server.cert,
    serverKey: server.key,
    serviceAccountKey,
    serviceAccountPub,
    client(name) {
      const cert = clients.get(name);
      if (!cert) throw new Error(`no client certificate named ${name}`);
      return cert;
    },
  };
}
