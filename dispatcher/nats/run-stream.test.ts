// The dispatcher's NATS side against a real nats-server: closing it (the last step of its SIGTERM path) ends
// whether or not the server still answers.
import { afterEach, describe, expect, it } from 'vitest';
import { NatsServer } from '../../test/support/nats-server.ts';
import { RunStream } from './run-stream.ts';

let nats: NatsServer | undefined;
afterEach(async () => {
  await nats?.dispose();
  nats = undefined;
});

describe('RunStream.close', () => {
  it('ends within its drain bound when the server stops answering with the results consumer open (a drain alone never ended)', async () => {
    nats = await NatsServer.start();
    const stream = await RunStream.connect({ servers: [nats.url] });
    await stream.consumeResults(() => undefined, () => undefined);
    nats.freeze();
    // Settles (and does not reject) once the bounded drain gave up and the connection was closed without it.
    const outcome = await Promise.race([stream.close(500).then(() => 'closed'), new Promise((resolve) => setTimeout(resolve, 10_000, 'still closing after 10 s')).then((v) => v)]);
    expect(outcome).toBe('closed');
  });

  it('drains normally when the server answers', async () => {
    nats = await NatsServer.start();
    const stream = await RunStream.connect({ servers: [nats.url] });
    await stream.consumeResults(() => undefined, () => undefined);
    await stream.publish('ns_r', [{ type: 'system', stage: 'pull_image', status: 'completed', message: 'pulled', timestamp: new Date().toISOString() } as never]);
    await expect(stream.close(5_000)).resolves.toBeUndefined();
  });
});

