import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

/** Why a request to the crane server extension failed. */
export type RequestErrorKind = 'network' | 'http';

/**
 * A failed call to the server extension, carrying the server's own message when it sent one.
 */
export class CraneRequestError extends Error {
  constructor(
    readonly kind: RequestErrorKind,
    message: string,
    readonly status: number | null = null,
    readonly body: unknown = null
  ) {
    super(message);
    this.name = 'CraneRequestError';
  }

  /** The `status` field of a JSON error body (`busy`, `error`, ...), if any. */
  get serverStatus(): string | null {
    return fieldOf(this.body, 'status');
  }
}

function fieldOf(body: unknown, key: string): string | null {
  if (body && typeof body === 'object' && key in body) {
    const value = (body as Record<string, unknown>)[key];
    return typeof value === 'string' ? value : null;
  }
  return null;
}

/**
 * Call the server extension's REST API.
 *
 * @param endPoint path under `/crane/`
 * @param init fetch options
 * @param settings server connection settings (defaults to the page's)
 * @returns the JSON body
 * @throws CraneRequestError on a network failure or a non-2xx status
 */
export async function requestAPI<T>(
  endPoint: string,
  init: RequestInit = {},
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<T> {
  const url = URLExt.join(settings.baseUrl, 'crane', endPoint);
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, init, settings);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new CraneRequestError('network', reason);
  }
  const text = await response.text();
  let body: unknown = text;
  if (text.length > 0) {
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON (a proxy's HTML error page): keep the text as the message.
    }
  }
  if (!response.ok) {
    const message =
      fieldOf(body, 'message') ??
      (typeof body === 'string' && body.length > 0
        ? body.slice(0, 300)
        : `${response.status} ${response.statusText}`);
    throw new CraneRequestError('http', message, response.status, body);
  }
  return body as T;
}
