import type { Catalog } from '../en/index.js';

export const password: Catalog['password'] = {
  forgotTitle: 'Passwort vergessen?',
  forgotIntro:
    'Geben Sie die E-Mail-Adresse Ihres Kontos ein. Wir senden Ihnen einen Link, mit dem Sie ein neues Passwort wählen.',
  email: 'E-Mail',
  sendLink: 'Link senden',
  sentTitle: 'Sehen Sie in Ihre E-Mails',
  sent: 'Wenn es ein Konto für {{email}} gibt, haben wir einen Link dorthin gesendet. Der Link gilt einmal und {{minutes}} Minuten lang.',
  backToSignIn: 'Zurück zur Anmeldung',
  tooMany:
    'Zu viele Anfragen für diese Adresse oder aus Ihrem Netz. Versuchen Sie es in {{seconds}} Sekunden erneut.',
  resetTitle: 'Neues Passwort wählen',
  newPassword: 'Neues Passwort',
  save: 'Passwort speichern',
  policy: 'Mindestens {{min}} Zeichen.',
  invalidTitle: 'Link ungültig',
  invalid: 'Dieser Link ist abgelaufen oder wurde schon benutzt. Fordern Sie einen neuen an.',
  askAgain: 'Neuen Link anfordern',
  doneTitle: 'Passwort geändert',
  done: 'Ihr Passwort wurde geändert und Sie wurden überall abgemeldet. Melden Sie sich mit dem neuen Passwort an.',
  continueSignIn: 'Weiter zur Anmeldung',
  resetMailSubject: 'Ihr {{product}}-Passwort zurücksetzen',
  resetMail:
    'Jemand hat verlangt, das Passwort Ihres {{product}}-Kontos zurückzusetzen.\n\nWählen Sie hier ein neues Passwort (der Link gilt einmal und {{minutes}} Minuten lang):\n{{link}}\n\nWaren Sie das nicht, ignorieren Sie diese E-Mail: Ihr Passwort bleibt, wie es ist.',
  forcedMail:
    'Ein Administrator hat das Passwort Ihres {{product}}-Kontos zurückgesetzt; das alte gilt nicht mehr.\n\nWählen Sie hier ein neues Passwort (der Link gilt einmal und {{minutes}} Minuten lang):\n{{link}}',
  changedMailSubject: 'Ihr {{product}}-Passwort wurde geändert',
  changedMail:
    'Das Passwort Ihres {{product}}-Kontos wurde geändert und alle Sitzungen wurden abgemeldet.\n\nWaren Sie das nicht, setzen Sie Ihr Passwort sofort zurück: {{link}}',
};
