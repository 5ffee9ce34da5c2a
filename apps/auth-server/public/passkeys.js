// Passkeys on the auth server's pages (README "Passkeys"), served as /passkeys.js under
// script-src 'self': the pages carry no inline script. A form marked data-passkey="sign-in"
// or "register" fetches its WebAuthn options from data-options (a same-origin POST with the
// form's csrf field), asks the browser for a credential, and submits itself with the
// credential as JSON in its hidden "response" field; the server verifies it.

const toBytes = (b64url) => {
  const b64 = b64url.replaceAll('-', '+').replaceAll('_', '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
};

const toB64url = (buffer) => {
  let bin = '';
  for (const byte of new Uint8Array(buffer)) bin += String.fromCharCode(byte);
  return btoa(bin).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
};

const descriptors = (list) => (list ?? []).map((c) => ({ ...c, id: toBytes(c.id) }));

function creationOptions(json) {
  return {
    ...json,
    challenge: toBytes(json.challenge),
    user: { ...json.user, id: toBytes(json.user.id) },
    excludeCredentials: descriptors(json.excludeCredentials),
  };
}

function requestOptions(json) {
  return {
    ...json,
    challenge: toBytes(json.challenge),
    allowCredentials: descriptors(json.allowCredentials),
  };
}

function credentialJson(credential) {
  const r = credential.response;
  const response = { clientDataJSON: toB64url(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = toB64url(r.attestationObject);
    response.transports = typeof r.getTransports === 'function' ? r.getTransports() : [];
  } else {
    response.authenticatorData = toB64url(r.authenticatorData);
    response.signature = toB64url(r.signature);
    if (r.userHandle && r.userHandle.byteLength > 0) response.userHandle = toB64url(r.userHandle);
  }
  return {
    id: credential.id,
    rawId: toB64url(credential.rawId),
    type: credential.type,
    authenticatorAttachment: credential.authenticatorAttachment ?? undefined,
    clientExtensionResults: credential.getClientExtensionResults(),
    response,
  };
}

/** `message`: a text, or the name of one the page gives in its own language (data-msg-*). */
function showError(form, message) {
  const line = form.querySelector('[data-passkey-error]');
  if (!line) return;
  line.textContent = line.dataset[`msg${message[0].toUpperCase()}${message.slice(1)}`] || message;
  line.hidden = false;
}

async function fetchOptions(form) {
  const csrf = form.querySelector('input[name="csrf"]');
  const res = await fetch(form.dataset.options, {
    method: 'POST',
    headers: { accept: 'application/json' },
    body: new URLSearchParams({ csrf: csrf ? csrf.value : '' }),
    credentials: 'same-origin',
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.error_description || 'failed');
  return body;
}

async function ceremony(form) {
  const options = await fetchOptions(form);
  const credential =
    form.dataset.passkey === 'register'
      ? await navigator.credentials.create({ publicKey: creationOptions(options) })
      : await navigator.credentials.get({ publicKey: requestOptions(options) });
  if (!credential) throw new Error('none');
  form.querySelector('input[name="response"]').value = JSON.stringify(credentialJson(credential));
  form.submit();
}

for (const form of document.querySelectorAll('form[data-passkey]')) {
  if (!window.PublicKeyCredential) {
    showError(form, 'unsupported');
    continue;
  }
  const button = form.querySelector('button');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (button) button.disabled = true;
    ceremony(form).catch((error) => {
      if (button) button.disabled = false;
      showError(
        form,
        error && error.name === 'NotAllowedError'
          ? 'cancelled'
          : (error && error.message) || 'failed',
      );
    });
  });
  // Disabled in the page until now: submitted without this handler, the form is empty.
  if (button) button.disabled = false;
}
