import { createServer, type Server } from 'node:net';
import { HOST } from './config.ts';
import { LocalKafkaError } from './errors.ts';

export interface PortRequest {
  /** Listener name as a user would recognise it, e.g. `PLAINTEXT`. */
  name: string;
  /** 0 picks a free port. */
  port: number;
  /** The CLI flag that changes this port, for the error message. */
  flag: string;
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
              `(\`ss -ltnp 'sport = :${request.port}'\` shows it) or choose another port with ${request.flag}.`,
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
