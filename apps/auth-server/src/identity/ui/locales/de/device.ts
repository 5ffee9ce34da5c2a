import type { Catalog } from '../en/index.js';

export const device: Catalog['device'] = {
  inputTitle: 'Gerät verbinden',
  enterCode: 'Geben Sie den Code ein, den Ihr Gerät anzeigt.',
  code: 'Code',
  confirmTitle: 'Gerät bestätigen',
  wantsToSignIn:
    '<strong>{{client}}</strong> möchte sich anmelden. Prüfen Sie, ob Ihr Gerät diesen Code anzeigt:',
  ifNot: 'Wenn nicht, oder wenn Sie dies nicht begonnen haben, wählen Sie „Abbrechen“.',
  abort: 'Abbrechen',
  connectedTitle: 'Gerät verbunden',
  connected: 'Sie können diese Seite schließen und zu Ihrem Gerät zurückkehren.',
  tooManyCodes: 'Zu viele falsche Codes. Versuchen Sie es später erneut.',
  expired:
    'Diese Geräteanmeldung ist abgelaufen oder hier nicht gültig. Beginnen Sie erneut auf Ihrem Gerät.',
  errors: {
    notFound: 'Dieser Code ist nicht gültig. Prüfen Sie ihn und versuchen Sie es erneut.',
    expired: 'Dieser Code ist abgelaufen. Beginnen Sie erneut auf Ihrem Gerät.',
    alreadyUsed: 'Dieser Code wurde bereits verwendet.',
    aborted: 'Die Anmeldung wurde abgebrochen.',
    noCode: 'Geben Sie den Code ein, den Ihr Gerät anzeigt.',
    other: 'Etwas ist schiefgelaufen. Versuchen Sie es erneut.',
  },
};
