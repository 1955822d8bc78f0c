/**
 * Publisher provenance: the gateway stamps every record published through event_publish
 * with the caller's api_key_id and signs it; event_consume checks the signature and says
 * whether a message's publisher can be believed.
 *
 * Everything happens in the gateway, the only process that knows who is calling: the
 * broker worker carries the stamped headers like any others and never needs a key.
 *
 * Headers whose names start with RESERVED_HEADER_PREFIX (any case) belong to the gateway.
 * A caller's publish that sets one is refused, so nothing a caller wrote can pass for a
 * stamp; on consume they are taken out of `headers` and reported as `publisher` and
 * `provenance`, so an agent never reads a claimed identity where a proven one belongs.
 */
import { z } from 'zod';
import { isReservedHeader, RESERVED_HEADER_PREFIX } from '../../../shared/event/reserved-headers.ts';
import { consumedMessage, consumeResult, publishResult } from '../../../shared/event/schemas.ts';
import { ToolError } from '../../mcp/tool.ts';
import { PROVENANCE_RULE } from './descriptions.ts';
import type { KeyRing } from './signing-keys.ts';

export { isReservedHeader, RESERVED_HEADER_PREFIX };

/** The stamp's headers, as written to Kafka. */
export const PROVENANCE_HEADERS = {
  publisher: 'mcp-publisher',
  publishedAt: 'mcp-published-at',
  keyId: 'mcp-key-id',
  signature: 'mcp-signature',
} as const;

/** Bumped if the signed encoding ever changes; a verifier refuses versions it does not know. */
const SIGNATURE_VERSION = 'v1';
/** First field of the signed bytes, so a signature made for anything else can never match. */
const DOMAIN = 'mcp-event-provenance/v1';

/** What a signature covers. `headers` are the caller's own (no reserved names). */
export interface SignedFields {
  keyId: string;
  publisher: string;
  publishedAt: string;
  topic: string;
  key: string | null;
  value: string | null;
  headers: Readonly<Record<string, string>>;
}

/** Presence byte, and for a present field its 4-byte length: written before the bytes. */
const FIELD_HEAD_BYTES = 5;

function fieldBytes(text: string | null): number {
  return text === null ? 1 : FIELD_HEAD_BYTES + Buffer.byteLength(text, 'utf8');
}

function writeField(out: Buffer, offset: number, text: string | null): number {
  if (text === null) {
    out[offset] = 0;
    return offset + 1;
  }
  out[offset] = 1;
  const length = out.write(text, offset + FIELD_HEAD_BYTES, 'utf8');
  out.writeUInt32BE(length, offset + 1);
  return offset + FIELD_HEAD_BYTES + length;
}

function byUtf8Name(a: readonly [string, string], b: readonly [string, string]): number {
  return Buffer.compare(Buffer.from(a[0], 'utf8'), Buffer.from(b[0], 'utf8'));
}

/**
 * The bytes a signature is made over. Every field is a presence byte (0: null, 1: present)
 * then, when present, a 4-byte big-endian length and the UTF-8 bytes, so no two different
 * records share an encoding: a null key differs from an empty one, and no value can bleed
 * into a header. Headers follow as a 4-byte count and name/value pairs sorted by the
 * bytes of the name. Strings are compared and signed as UTF-8 because that is what Kafka
 * stores and what a consumer decodes, whatever language it is written in.
 */
export function canonicalBytes(fields: SignedFields): Buffer {
  const scalars = [
    DOMAIN,
    fields.keyId,
    fields.publisher,
    fields.publishedAt,
    fields.topic,
    fields.key,
    fields.value,
  ];
  const headers = Object.entries(fields.headers);
  if (headers.length > 1) headers.sort(byUtf8Name);
  // One allocation sized up front: this runs on every publish and every consumed message.
  let size = 4;
  for (const text of scalars) size += fieldBytes(text);
  for (const [name, value] of headers) size += fieldBytes(name) + fieldBytes(value);
  const out = Buffer.allocUnsafe(size);
  let offset = 0;
  for (const text of scalars) offset = writeField(out, offset, text);
  offset = out.writeUInt32BE(headers.length, offset);
  for (const [name, value] of headers) offset = writeField(out, writeField(out, offset, name), value);
  return out;
}

export type ProvenanceState = 'verified' | 'unsigned' | 'invalid';

/** Fields event_consume adds to each message. */
export const provenanceFields = {
  publisher: z
    .string()
    .nullable()
    .describe('api_key_id of the publisher when provenance is verified; otherwise null.'),
  published_at: z
    .string()
    .nullable()
    .describe('When the gateway accepted the publish (ISO 8601), when provenance is verified.'),
  provenance: z.enum(['verified', 'unsigned', 'invalid']),
  provenance_error: z.string().nullable().describe('Why provenance is invalid; null otherwise.'),
};

export const consumeResultWithProvenance = consumeResult.extend({
  messages: z.array(consumedMessage.extend(provenanceFields)),
});

export const publishResultWithProvenance = publishResult.extend({
  publisher: z.string().describe('Your api_key_id, stamped on the record by the gateway.'),
  signing_key_id: z
    .string()
    .nullable()
    .describe('Key the record was signed with; null when this gateway has no signing key.'),
});

export const provenanceCapabilities = z.object({
  signing: z.enum(['hmac-sha256', 'ed25519', 'off']),
  signingKeyId: z.string().nullable(),
  verifyKeys: z.array(
    z.object({
      keyId: z.string(),
      algorithm: z.enum(['hmac-sha256', 'ed25519']),
      /** Ed25519 only: the SPKI PEM an outside consumer verifies with. Never a secret. */
      publicKey: z.string().nullable(),
    }),
  ),
  reservedHeaderPrefix: z.string(),
  headers: z.object({
    publisher: z.string(),
    publishedAt: z.string(),
    keyId: z.string(),
    signature: z.string(),
  }),
  note: z.string(),
});

type Consumed = z.output<typeof consumedMessage>;
type WithProvenance<M> = Omit<M, 'headers'> & {
  headers: Record<string, string>;
  publisher: string | null;
  published_at: string | null;
  provenance: ProvenanceState;
  provenance_error: string | null;
};

export class Provenance {
  constructor(
    private readonly keys: KeyRing,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Refuses reserved names, naming them, before anything reaches the broker. */
  checkCallerHeaders(headers: Readonly<Record<string, string>> | undefined): void {
    const reserved = Object.keys(headers ?? {}).filter(isReservedHeader);
    if (reserved.length === 0) return;
    throw new ToolError(
      'INVALID_ARGUMENT',
      `Header${reserved.length === 1 ? '' : 's'} ${reserved.map((name) => `"${name}"`).join(', ')} ` +
        `use${reserved.length === 1 ? 's' : ''} the prefix "${RESERVED_HEADER_PREFIX}", which is reserved for the gateway's publisher stamp. ` +
        'Rename them (for example with an "x-" prefix) and publish again; nothing was published.',
    );
  }

  /** The caller's headers plus the stamp, ready to publish to `topic`. */
  stamp(
    record: {
      topic: string;
      key?: string | undefined;
      value: string;
      headers?: Record<string, string> | undefined;
    },
    publisher: string,
  ): { headers: Record<string, string>; signingKeyId: string | null } {
    const callerHeaders = record.headers ?? {};
    const publishedAt = this.now().toISOString();
    const signer = this.keys.signing;
    const headers: Record<string, string> = {
      ...callerHeaders,
      [PROVENANCE_HEADERS.publisher]: publisher,
      [PROVENANCE_HEADERS.publishedAt]: publishedAt,
    };
    if (!signer) return { headers, signingKeyId: null };
    const signature = signer.sign(
      canonicalBytes({
        keyId: signer.id,
        publisher,
        publishedAt,
        topic: record.topic,
        key: record.key ?? null,
        value: record.value,
        headers: callerHeaders,
      }),
    );
    headers[PROVENANCE_HEADERS.keyId] = signer.id;
    headers[PROVENANCE_HEADERS.signature] = `${SIGNATURE_VERSION}.${signature.toString('base64url')}`;
    return { headers, signingKeyId: signer.id };
  }

  /** A consumed message as an agent should see it: caller headers only, and who is proven to have sent it. */
  assess<M extends Consumed>(message: M): WithProvenance<M> {
    const callerHeaders: Record<string, string> = {};
    let reserved: Record<string, string> | null = null;
    for (const [name, value] of Object.entries(message.headers)) {
      if (isReservedHeader(name)) {
        reserved ??= {};
        reserved[name] = value;
      } else callerHeaders[name] = value;
    }
    const outcome = reserved ? this.check(message, callerHeaders, reserved) : UNSIGNED;
    return { ...message, headers: callerHeaders, ...outcome };
  }

  private check(
    message: Consumed,
    callerHeaders: Record<string, string>,
    reserved: Record<string, string>,
  ): Outcome {
    const signature = reserved[PROVENANCE_HEADERS.signature];
    if (signature === undefined) return UNSIGNED;
    const keyId = reserved[PROVENANCE_HEADERS.keyId];
    const publisher = reserved[PROVENANCE_HEADERS.publisher];
    const publishedAt = reserved[PROVENANCE_HEADERS.publishedAt];
    if (keyId === undefined || publisher === undefined || publishedAt === undefined) {
      return invalid(
        `the record has ${PROVENANCE_HEADERS.signature} but lacks ${PROVENANCE_HEADERS.keyId}, ${PROVENANCE_HEADERS.publisher} or ${PROVENANCE_HEADERS.publishedAt}`,
      );
    }
    const [version, encoded, extra] = signature.split('.');
    if (version !== SIGNATURE_VERSION || !encoded || extra !== undefined) {
      return invalid(
        `the signature is not in a format this gateway knows (expected "${SIGNATURE_VERSION}.<base64url>")`,
      );
    }
    const key = this.keys.verifier(keyId);
    if (!key) {
      return invalid(
        // The id is the record's say-so: echoed only when it looks like a key id, never free text.
        `signed with ${/^[A-Za-z0-9_-]{1,64}$/.test(keyId) ? `key id "${keyId}"` : 'a key id'}, which this gateway does not know: a key retired from its verify keys, another deployment's key, or a forgery`,
      );
    }
    const bytes = canonicalBytes({
      keyId,
      publisher,
      publishedAt,
      topic: message.topic,
      key: message.key,
      value: message.value,
      headers: callerHeaders,
    });
    if (!key.verify(bytes, Buffer.from(encoded, 'base64url'))) {
      return invalid(
        'the signature does not match the record: its topic, key, value or headers changed after signing',
      );
    }
    return { publisher, published_at: publishedAt, provenance: 'verified', provenance_error: null };
  }

  /**
   * The same for every call while the key ring holds the same keys: built once, frozen all
   * the way down (every capabilities answer hands out this one object, so no reader may
   * change it). Built afresh if the ring's keys are ever replaced.
   */
  capabilities(): z.output<typeof provenanceCapabilities> {
    const { signing, all } = this.keys;
    const known = this.described;
    if (known?.signing === signing && known.all === all && known.count === all.length) return known.block;
    const block: z.output<typeof provenanceCapabilities> = Object.freeze({
      signing: signing?.algorithm ?? 'off',
      signingKeyId: signing?.id ?? null,
      verifyKeys: Object.freeze(
        all.map((key) =>
          Object.freeze({
            keyId: key.id,
            algorithm: key.algorithm,
            publicKey: key.publicKeyPem ?? null,
          }),
        ),
      ) as z.output<typeof provenanceCapabilities>['verifyKeys'],
      reservedHeaderPrefix: RESERVED_HEADER_PREFIX,
      headers: Object.freeze({ ...PROVENANCE_HEADERS }),
      note: signing
        ? `Records published here are signed with key ${signing.id}. ${PROVENANCE_RULE}`
        : `No signing key is configured (EVENT_SIGNING_SECRET or EVENT_SIGNING_PRIVATE_KEY), so records published here carry the publisher's api_key_id but no signature, and read back as unsigned. ${PROVENANCE_RULE}`,
    });
    this.described = { signing, all, count: all.length, block };
    return block;
  }

  private described?: {
    signing: KeyRing['signing'];
    all: KeyRing['all'];
    count: number;
    block: z.output<typeof provenanceCapabilities>;
  };
}

interface Outcome {
  publisher: string | null;
  published_at: string | null;
  provenance: ProvenanceState;
  provenance_error: string | null;
}

const UNSIGNED: Outcome = {
  publisher: null,
  published_at: null,
  provenance: 'unsigned',
  provenance_error: null,
};

function invalid(reason: string): Outcome {
  return { publisher: null, published_at: null, provenance: 'invalid', provenance_error: reason };
}
