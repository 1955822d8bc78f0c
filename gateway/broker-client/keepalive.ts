/** The gateway's keepalive on a ready worker link: pings, and closes a link that went silent. */
import type { FramedLink } from '../../shared/ipc/framed-link.ts';

/**
 * Pings every `every` ms and closes the link once nothing arrived for `limit` ms. Any byte
 * from the worker counts as a sign of life; pings make sure there is traffic. A tick that
 * itself ran late (this process was busy) proves nothing about the worker, so it only
 * pings: the worker's bytes may be waiting unread behind the delay. Returns the timer.
 */
export function startKeepalive(link: FramedLink, every: number, limit: number): NodeJS.Timeout {
  let pings = 0;
  let lastTick = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const late = now - lastTick > every * 2;
    lastTick = now;
    const silentFor = now - link.lastReceivedAt;
    if (!late && silentFor > limit) {
      link.close(
        new Error(
          `the worker stopped answering: nothing received for ${Math.round(silentFor)} ms although the connection is open (keepalive)`,
        ),
      );
      return;
    }
    pings += 1;
    link.send({ t: 'ping', n: pings });
  }, every);
  timer.unref();
  return timer;
}
