import type { Catalog } from '../en/index.js';

export const mfa: Catalog['mfa'] = {
  title: 'Bestätigen Sie, dass Sie es sind',
  secondStepFor: 'Ein zweiter Schritt, um mit <strong>{{client}}</strong> fortzufahren',
  appCode: 'Code aus Ihrer Authenticator-App',
  verify: 'Bestätigen',
  useRecoveryCode: 'Einen Wiederherstellungscode verwenden',
  recoveryCode: 'Wiederherstellungscode',
  useThisCode: 'Diesen Code verwenden',
  noFactor: '{{client}} verlangt einen zweiten Anmeldefaktor, und Ihr Konto hat noch keinen.',
  setUpApp: 'Authenticator-App einrichten',
  orOnAccountPage:
    'Oder richten Sie einen auf <a href="/account">Ihrer Kontoseite</a> ein und melden Sie sich dann erneut an.',
  invalidCode: 'Dieser Code ist nicht gültig. Versuchen Sie es erneut.',
  invalidCodeTime:
    'Dieser Code ist nicht gültig. Prüfen Sie die Uhrzeit auf Ihrem Gerät und versuchen Sie es erneut.',
  tooManyCodes: 'Zu viele falsche Codes. Versuchen Sie es in {{seconds}} Sekunden erneut.',
  usePasskey: 'Einen Passkey verwenden',
  appOn: 'Ihre Authenticator-App ist eingeschaltet.',
  passkeyReady: 'Ihr Passkey ist bereit.',
  enrol: {
    title: 'Authenticator-App einrichten',
    scan: 'Scannen Sie diesen Code mit Ihrer Authenticator-App oder geben Sie den Schlüssel dort ein.',
    qrAlt: 'QR-Code des Authenticator-Schlüssels',
    key: 'Schlüssel:',
    code: 'Von der App angezeigter Code',
    turnOn: 'Einschalten',
  },
  recovery: {
    title: 'Ihre Wiederherstellungscodes',
    explain:
      'Jeder Code meldet Sie einmal an, wenn Sie Ihren zweiten Faktor nicht verwenden können. Bewahren Sie sie sicher auf: Sie werden nur jetzt angezeigt.',
  },
  passkey: {
    addTitle: 'Passkey hinzufügen',
    notAccepted: 'Passkey nicht akzeptiert',
    addedTitle: 'Passkey hinzugefügt',
    ready:
      '{{name}} ist bereit. Wählen Sie beim nächsten Mal „Mit einem Passkey anmelden“: ganz ohne E-Mail und Passwort.',
    backToAccount: 'Zurück zu Ihrem Konto',
    noSetup:
      'Ein Passkey wird hier nur bei der Anmeldung eines Kontos ohne zweiten Faktor hinzugefügt.',
    signInAgain: 'Melden Sie sich erneut an, um Ihre Passkeys zu ändern.',
    nameLength: 'Der Name eines Passkeys hat 1 bis {{max}} Zeichen.',
    noSuch: 'Diesen Passkey gibt es nicht.',
    formExpiredReload: 'Das Formular ist abgelaufen; laden Sie die Seite neu.',
    notAtSignIn: 'Diese Anmeldung ist nicht bei einem Anmeldeschritt.',
    defaultName: 'Passkey',
    script: {
      unsupported: 'Dieser Browser unterstützt keine Passkeys.',
      cancelled: 'Die Passkey-Anfrage wurde abgebrochen oder ist abgelaufen.',
      failed: 'Die Passkey-Anfrage ist fehlgeschlagen.',
      none: 'Es wurde kein Passkey ausgewählt.',
    },
    errors: {
      invalid_response: 'Die Antwort des Passkeys ist nicht gültig.',
      challenge_unknown:
        'Diese Passkey-Anfrage ist abgelaufen oder wurde bereits verwendet. Versuchen Sie es erneut.',
      unknown_credential: 'Dieser Passkey ist hier nicht registriert.',
      wrong_user: 'Dieser Passkey gehört zu einem anderen Konto.',
      verification_failed: 'Der Passkey konnte nicht überprüft werden.',
      already_registered: 'Dieser Passkey ist bereits registriert.',
      too_many: 'Ein Konto hat höchstens {{max}} Passkeys. Entfernen Sie zuerst einen.',
    },
  },
};
