import { ServerConnection } from '@jupyterlab/services';

import { CraneRequestError, requestAPI } from '../../contract/request';

/** Server settings whose fetch answers with `respond` and records the calls. */
function settingsAnswering(
  respond: (url: string, init: RequestInit) => Promise<Response>
): { settings: ServerConnection.ISettings; calls: string[] } {
  const calls: string[] = [];
  const settings = ServerConnection.makeSettings({
    baseUrl: 'http://localhost:8888/lab-base/',
    fetch: ((input: RequestInfo, init: RequestInit) => {
      const url = typeof input === 'string' ? input : input.url;
      calls.push(url);
      return respond(url, init);
    }) as typeof fetch
  });
  return { settings, calls };
}

function response(status: number, body: string): Promise<Response> {
  return Promise.resolve({
    ok: status >= 200 && status < 300,
    status,
    statusText: `status ${status}`,
    text: () => Promise.resolve(body)
  } as Response);
}

describe('requestAPI', () => {
  it('calls /crane/<endpoint> under the base URL and parses JSON', async () => {
    const { settings, calls } = settingsAnswering(() =>
      response(200, '{"model": null}')
    );
    const data = await requestAPI<{ model: null }>('config', {}, settings);
    expect(data).toEqual({ model: null });
    // The cache-busting query ServerConnection adds is not ours to test.
    expect(calls[0].split('?')[0]).toBe(
      'http://localhost:8888/lab-base/crane/config'
    );
  });

  it('turns an HTTP error into a typed error with the server message', async () => {
    const { settings } = settingsAnswering(() =>
      response(
        400,
        '{"status": "error", "message": "settings.votes: must be odd"}'
      )
    );
    const error = await requestAPI(
      'analyze',
      { method: 'POST' },
      settings
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CraneRequestError);
    const typed = error as CraneRequestError;
    expect(typed.kind).toBe('http');
    expect(typed.status).toBe(400);
    expect(typed.message).toBe('settings.votes: must be odd');
    expect(typed.serverStatus).toBe('error');
  });

  it('reports a busy kernel as 409 with its status', async () => {
    const { settings } = settingsAnswering(() =>
      response(409, '{"status": "busy"}')
    );
    const typed = (await requestAPI('analyze', {}, settings).catch(
      (e: unknown) => e
    )) as CraneRequestError;
    expect(typed.status).toBe(409);
    expect(typed.serverStatus).toBe('busy');
    expect(typed.message).toBe('409 status 409');
  });

  it('keeps a non-JSON error body as the message', async () => {
    const { settings } = settingsAnswering(() =>
      response(502, '<html>Bad gateway</html>')
    );
    const typed = (await requestAPI('config', {}, settings).catch(
      (e: unknown) => e
    )) as CraneRequestError;
    expect(typed.message).toBe('<html>Bad gateway</html>');
  });

  it('turns a network failure into a typed network error', async () => {
    const { settings } = settingsAnswering(() =>
      Promise.reject(new TypeError('Failed to fetch'))
    );
    const typed = (await requestAPI('config', {}, settings).catch(
      (e: unknown) => e
    )) as CraneRequestError;
    expect(typed).toBeInstanceOf(CraneRequestError);
    expect(typed.kind).toBe('network');
    expect(typed.status).toBeNull();
    expect(typed.message).toContain('Failed to fetch');
  });
});
