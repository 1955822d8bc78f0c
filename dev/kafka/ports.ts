import { createServer, type Server } from 'node:net';
import { type BrokerPorts, HOST } from './config.ts';
import { LocalKafkaError } from './errors.ts';

export interface PortRequest {
  /** Listener name as a user would recognise it, e.g. `PLAINTEXT`. */
  name: string;
  /** 0 picks a free port. */
  port: number;
  /** The CLI flag that changes this port, for the error message. */
  flag: string;
  /** The port was kept from the data dir's first start: a flag does not move it. */
  kept?: boolean;
}

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: HOST, port, exclusive: true }, () => resolve(server));
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * Binds every requested port at once (so two `0` requests never get the same port), then
 * releases them for the broker. Kafka would otherwise fail minutes later with a bind exception
 * buried in its log; this names the port and the flag that moves it.
 */
export async function reservePorts(requests: PortRequest[]): Promise<number[]> {
  const fixed = requests.filter((r) => r.port !== 0).map((r) => r.port);
  const duplicate = fixed.find((port, i) => fixed.indexOf(port) !== i);
  if (duplicate !== undefined) {
    const names = requests.filter((r) => r.port === duplicate).map((r) => r.name);
    throw new LocalKafkaError(
      'BAD_OPTION',
      `port ${duplicate} is given to more than one listener (${names.join(', ')})`,
    );
  }
  const servers: Server[] = [];
  try {
    for (const request of requests) {
      try {
        servers.push(await listen(request.port));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE' || code === 'EACCES') {
          throw new LocalKafkaError(
            'PORT_IN_USE',
            `port ${request.port} (${request.name} listener) on ${HOST} is ${code === 'EACCES' ? 'not permitted' : 'already in use'}` +
              `: stop whatever is listening on ${HOST}:${request.port} ` +
              `(\`ss -ltnp 'sport = :${request.port}'\` shows it) ` +
              (request.kept
                ? 'or use a new data dir (this one keeps the ports of its first start).'
                : `or choose another port with ${request.flag}.`),
          );
        }
        throw error;
      }
    }
    return servers.map((server) => {
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('unexpected socket address');
      return address.port;
    });
  } finally {
    await Promise.all(servers.map(close));
  }
}

/** In a cluster, node n's default ports are node 1's plus NODE_PORT_STEP × (n - 1): 9092, 9102, 9112… */
export const NODE_PORT_STEP = 10;

type Listener = 'plaintext' | 'saslPlaintext' | 'controller' | 'saslSsl';

const LISTENERS: Array<{ key: Listener; name: string; flag: string }> = [
  { key: 'plaintext', name: 'PLAINTEXT', flag: '--plaintext-port (option plaintextPort)' },
  { key: 'saslPlaintext', name: 'SASL_PLAINTEXT', flag: '--sasl-port (option saslPlaintextPort)' },
  { key: 'controller', name: 'CONTROLLER', flag: '--controller-port (option controllerPort)' },
  { key: 'saslSsl', name: 'SASL_SSL', flag: '--sasl-ssl-port (option saslSslPort)' },
];

export interface PortPlanInput {
  nodeId: number;
  brokers: number;
  /** What the caller asked for: undefined = default, 0 = any free port. */
  wanted: Partial<Record<Listener, number>>;
  defaults: Record<Listener, number>;
  withSsl: boolean;
  /** The ports this node had before (its ports.json), if it ran before. */
  stored: BrokerPorts | undefined;
}

/**
 * Which port each listener of one node asks for. A node that ran before keeps its ports:
 * clients' bootstrap lists and (in a cluster) the other nodes' quorum voters name them, so
 * "any free port" (0) or no choice at all means the stored one. One broker may still be
 * moved by naming a port; a cluster node may not, since its peers would no longer find it.
 */
export function planNodePorts(input: PortPlanInput): PortRequest[] {
  const { nodeId, brokers, wanted, defaults, stored } = input;
  const offset = NODE_PORT_STEP * (nodeId - 1);
  const requests: PortRequest[] = [];
  for (const { key, name, flag } of LISTENERS) {
    if (key === 'saslSsl' && !input.withSsl) continue;
    const asked = wanted[key];
    const kept = stored?.[key] ?? undefined;
    const label = brokers === 1 ? name : `node ${nodeId} ${name}`;
    let port: number;
    let isKept = false;
    if (kept !== undefined && kept !== null && (asked === undefined || asked === 0)) {
      port = kept;
      isKept = true;
    } else if (asked === undefined) port = defaults[key] + offset;
    else if (asked === 0) port = 0;
    else port = asked + offset;
    if (brokers > 1 && kept !== undefined && kept !== null && port !== kept) {
      throw new LocalKafkaError(
        'BAD_OPTION',
        `node ${nodeId} of this cluster keeps ${name} port ${kept} from its first start (the other nodes and clients know it); ` +
          `drop ${flag.split(' ')[0]} or start a new cluster in another data dir`,
      );
    }
    requests.push({ name: label, port, flag, kept: isKept });
  }
  return requests;
}

/** Ports in the order planNodePorts asked for them, back into a BrokerPorts. */
export function toBrokerPorts(ports: number[], withSsl: boolean): BrokerPorts {
  const [plaintext, saslPlaintext, controller, saslSsl] = ports;
  if (plaintext === undefined || saslPlaintext === undefined || controller === undefined)
    throw new Error('port reservation returned too few ports');
  return { plaintext, saslPlaintext, controller, saslSsl: withSsl ? (saslSsl ?? null) : null };
}
