/**
 * What the panel says of the server and the settings: short notices above everything else (no model,
 * how to add one, a key that may be missing, a model the server does not allow), and the trial mode
 * in effect with where it comes from.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import React from 'react';

import type { CraneSettings } from '../settings/model';

/** A command line, not words: never translated. */
const MODEL_EXAMPLE =
  'CRANE_MODEL=openai/gpt-4o-mini OPENAI_API_KEY=… jupyter lab';

/**
 * The trial mode in effect and where it comes from: "Trial runs: with every check (the server's
 * setting)", or why none can run here.
 */
export function trialModeText(
  trans: TranslationBundle,
  settings: CraneSettings
): string {
  const server = settings.server;
  if (server && !server.trial_available) {
    return trans.__(
      'Trial runs are not possible here: %1',
      server.trial_unavailable_reason ?? trans.__('no sandbox')
    );
  }
  const mode = settings.trialMode;
  const what =
    mode === 'auto'
      ? trans.__('with every check')
      : mode === 'on-demand'
        ? trans.__('when you ask')
        : trans.__('off');
  // A server that runs no trials removes the setting: its "off" is the server's.
  const origin =
    server?.trial === 'off' ? 'server' : settings.originOf('trial');
  switch (origin) {
    case 'user':
      return trans.__('Trial runs: %1 (your setting)', what);
    case 'server':
      return trans.__("Trial runs: %1 (the server's setting)", what);
    default:
      return trans.__('Trial runs: %1', what);
  }
}

/** Short notices about the server: once, above everything else. */
export function Notices(props: {
  trans: TranslationBundle;
  settings: CraneSettings;
}): React.ReactElement | null {
  const { trans, settings } = props;
  const server = settings.server;
  if (!server) {
    return null;
  }
  const chosen = settings.current.model.trim();
  const refused =
    chosen && settings.hasModel && !server.allowed_models.includes(chosen);
  return (
    <>
      {!settings.hasModel && (
        <p className="jp-Crane-notice jp-mod-nomodel">
          {trans.__(
            'No model is configured: only certain crashes are reported.'
          )}
        </p>
      )}
      {!settings.hasModel && (
        <details className="jp-Crane-notice jp-Crane-addmodel">
          <summary>{trans.__('How to add a model')}</summary>
          <p>
            {trans.__(
              "Whoever starts the Jupyter server chooses the model; its key stays on the server. Start it with the environment variable %1 set to a litellm model name and the provider's key in its usual variable, for example:",
              'CRANE_MODEL'
            )}
          </p>
          <code>{MODEL_EXAMPLE}</code>
          <p>
            {trans.__(
              'Or set %1 (and %2 for a local server such as Ollama, vLLM or llama.cpp) in jupyter_server_config.py, then restart the server.',
              'c.CraneExtension.model',
              'c.CraneExtension.api_base'
            )}
          </p>
        </details>
      )}
      {server.model && !server.key_configured && (
        <p className="jp-Crane-notice">
          {trans.__(
            'The model %1 may lack an API key: %2',
            server.model,
            server.missing_env.join(', ') || '?'
          )}
        </p>
      )}
      {refused && (
        <p className="jp-Crane-notice">
          {trans.__(
            'The server does not allow the model %1; its default is used.',
            chosen
          )}
        </p>
      )}
    </>
  );
}
