import type { Catalog } from '../en/index.js';

export const signup: Catalog['signup'] = {
  title: 'Konto erstellen',
  intro: 'Wählen Sie Ihre E-Mail-Adresse und ein Passwort für {{product}}.',
  email: 'E-Mail',
  password: 'Passwort',
  passwordHint:
    'Mindestens 8 Zeichen. Einige unzusammenhängende Wörter ergeben ein starkes Passwort; gängige Passwörter werden abgelehnt.',
  submit: 'Konto erstellen',
  backToSignIn: 'Zurück zur Anmeldung',
  closedTitle: 'Registrierung geschlossen',
  closed: 'Hier können keine neuen Konten erstellt werden. Bitten Sie den Administrator um eines.',
  weakPassword: 'Wählen Sie ein anderes Passwort ({{reason}}).',
  invalidEmail: 'Geben Sie eine gültige E-Mail-Adresse ein.',
  tooMany:
    'Zu viele Anfragen für diese Adresse oder dieses Netz. Versuchen Sie es in {{seconds}} Sekunden erneut.',
  checkMailTitle: 'Prüfen Sie Ihre E-Mails',
  checkMail:
    'Wir haben eine Nachricht an {{email}} gesendet. Öffnen Sie den Link darin, um Ihre Adresse zu bestätigen. Der Link gilt {{hours}} Stunden.',
  verifyTitle: 'Adresse bestätigen',
  verify: 'Bestätigen Sie, dass {{email}} Ihre Adresse ist.',
  verifySubmit: 'Meine Adresse bestätigen',
  verifiedTitle: 'Adresse bestätigt',
  verified: 'Ihre Adresse ist bestätigt. Sie können sich jetzt anmelden.',
  continueSignIn: 'Weiter zur Anmeldung',
  invalidLinkTitle: 'Dieser Link funktioniert nicht',
  invalidLink:
    'Der Link ist abgelaufen oder wurde schon benutzt. Geben Sie Ihre Adresse ein, um einen neuen zu erhalten.',
  unverifiedTitle: 'Bestätigen Sie zuerst Ihre Adresse',
  unverified:
    'Bestätigen Sie zuerst Ihre E-Mail-Adresse: Öffnen Sie den Link aus unserer Nachricht bei der Registrierung und melden Sie sich dann erneut an.',
  resendTitle: 'Neuen Bestätigungslink anfordern',
  resendIntro: 'Geben Sie die Adresse ein, mit der Sie sich registriert haben.',
  resendSubmit: 'Neuen Link senden',
  resentTitle: 'Prüfen Sie Ihre E-Mails',
  resent:
    'Wenn ein Konto mit {{email}} auf die Bestätigung seiner Adresse wartet, haben wir ihm einen neuen Link gesendet.',
  verifyMailSubject: 'Bestätigen Sie Ihre Adresse für {{product}}',
  verifyMailText:
    'Hallo,\n\num Ihr {{product}}-Konto fertig einzurichten, öffnen Sie diesen Link und bestätigen Sie Ihre Adresse:\n\n{{link}}\n\nDer Link gilt {{hours}} Stunden. Wenn Sie sich nicht registriert haben, ignorieren Sie diese Nachricht: ohne diese Bestätigung wird kein Konto benutzt.',
  takenMailSubject: 'Jemand wollte sich mit Ihrer Adresse bei {{product}} registrieren',
  takenMailText:
    'Hallo,\n\njemand wollte mit dieser Adresse ein {{product}}-Konto erstellen, aber sie hat schon eines. Es wurde kein neues Konto erstellt.\n\nWenn Sie es waren, melden Sie sich an, oder setzen Sie Ihr Passwort zurück, falls Sie es vergessen haben:\n\n{{signIn}}\n\nWenn Sie es nicht waren, ignorieren Sie diese Nachricht.',
};
