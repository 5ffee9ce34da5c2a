import type { Catalog } from '../en/index.js';

export const account: Catalog['account'] = {
  title: 'Ihr Konto',
  back: 'Zurück zu Ihrem Konto',
  signIn: 'Anmelden',
  signInFirst: 'Melden Sie sich an, um Ihr Konto zu verwalten.',
  signInAgain:
    'Um Ihr Konto zu ändern, melden Sie sich zuerst erneut an (mit Ihrem zweiten Faktor, falls Sie einen haben).',
  tooMany: 'Zu viele Versuche. Versuchen Sie es in {{seconds}} Sekunden erneut.',
  wrongPassword: 'Ihr aktuelles Passwort stimmt nicht.',
  currentPassword: 'Aktuelles Passwort',
  none: 'Keine.',
  gone: 'Das gibt es nicht mehr.',
  sectionTitle: 'Ihre Angaben',
  linkPassword: 'Passwort ändern',
  linkEmail: 'E-Mail-Adresse ändern',
  linkSessions: 'Wo Sie angemeldet sind und welche Apps Zugriff haben',
  linkData: 'Ihre Daten herunterladen',
  linkClose: 'Konto schließen',

  passwordTitle: 'Passwort ändern',
  newPassword: 'Neues Passwort',
  passwordSubmit: 'Passwort ändern',
  passwordRefused: 'Das neue Passwort ist nicht erlaubt: {{reason}}.',
  passwordChanged: 'Ihr Passwort ist geändert. Überall sonst sind Sie abgemeldet.',
  passwordMailSubject: 'Ihr Passwort wurde geändert',
  passwordMailText:
    'Das Passwort Ihres Kontos {{email}} wurde am {{at}} geändert.\n\nWenn Sie das nicht waren, setzen Sie Ihr Passwort jetzt zurück und benachrichtigen Sie den Administrator.',

  emailTitle: 'E-Mail-Adresse ändern',
  newEmail: 'Neue E-Mail-Adresse',
  emailSubmit: 'Bestätigungslink senden',
  emailInvalid: 'Geben Sie eine gültige E-Mail-Adresse ein.',
  emailSame: 'Das ist bereits Ihre Adresse.',
  emailTaken: 'Diese Adresse gehört zu einem anderen Konto.',
  emailSent:
    'Wir haben einen Link an {{email}} gesendet. Öffnen Sie ihn, um die Änderung zu bestätigen.',
  emailMailSubject: 'Bestätigen Sie Ihre neue E-Mail-Adresse',
  emailMailText:
    'Öffnen Sie diesen Link, um {{email}} zur Adresse Ihres Kontos zu machen:\n\n{{link}}\n\nDer Link funktioniert einmal, {{minutes}} Minuten lang. Wenn Sie das nicht angefordert haben, ignorieren Sie diese E-Mail.',
  confirmTitle: 'Neue E-Mail-Adresse bestätigen',
  confirmText: '{{email}} zur Adresse Ihres Kontos machen?',
  confirmSubmit: 'Bestätigen',
  confirmInvalid:
    'Dieser Link ist abgelaufen oder wurde schon benutzt. Fordern Sie auf Ihrer Kontoseite einen neuen an.',
  emailChanged: 'Ihre Adresse ist jetzt {{email}}. Melden Sie sich ab jetzt damit an.',
  emailChangedMailSubject: 'Ihre E-Mail-Adresse wurde geändert',
  emailChangedMailText:
    'Die E-Mail-Adresse Ihres Kontos wurde am {{at}} von {{from}} zu {{to}} geändert, und das Konto wurde überall sonst abgemeldet.\n\nWenn Sie das nicht waren, hat jemand Ihr Konto übernommen, und diese Adresse öffnet es nicht mehr: Bitten Sie jetzt den Administrator, dem Konto seine Adresse {{from}} zurückzugeben, und wählen Sie dann hier ein neues Passwort:\n\n{{reset}}',
  emailNoticeSubject: 'Eine Änderung Ihrer E-Mail-Adresse wurde angefordert',
  emailNoticeText:
    'Am {{at}} hat jemand, der in Ihrem Konto {{from}} angemeldet ist, verlangt, seine Adresse zu {{to}} zu ändern. Nichts ändert sich, bis der an {{to}} gesendete Link geöffnet wird (innerhalb von {{minutes}} Minuten).\n\nWenn Sie das nicht waren, brechen Sie die Änderung hier ab:\n\n{{link}}\n\nWählen Sie danach ein neues Passwort: Wer die Änderung verlangt hat, kennt Ihr jetziges.',
  cancelTitle: 'Änderung Ihrer E-Mail-Adresse abbrechen',
  cancelText:
    '{{from}} als Adresse Ihres Kontos behalten und die Änderung zu {{to}} abbrechen? Ihr Konto wird dann überall abgemeldet.',
  cancelSubmit: 'Änderung abbrechen',
  cancelInvalid:
    'Dieser Link ist abgelaufen oder wurde schon benutzt: Die Änderung wurde bestätigt, abgebrochen oder durch eine neuere Anfrage ersetzt. Wenn Ihre Adresse ohne Ihr Zutun geändert wurde, bitten Sie den Administrator, sie wiederherzustellen.',
  cancelled:
    'Die Änderung ist abgebrochen: Ihre Adresse bleibt {{email}}, und Ihr Konto ist überall abgemeldet. Wenn Sie die Änderung nicht verlangt haben, kennt jemand Ihr Passwort.',
  chooseNewPassword: 'Neues Passwort wählen',

  sessionsTitle: 'Wo Sie angemeldet sind',
  sessionSignedIn: 'Angemeldet {{at}}',
  sessionThisBrowser: 'Dieser Browser',
  sessionApps: 'Apps: {{apps}}',
  sessionEnd: 'Dort abmelden',
  sessionEnded: 'Diese Sitzung ist beendet, mit den darüber angemeldeten Apps.',
  sessionsEndOthers: 'Überall sonst abmelden',
  sessionsEndedOthers:
    'Sie sind überall sonst abgemeldet, auch in allen Apps. Früher gesendete Links funktionieren nicht mehr.',
  appsTitle: 'Apps mit Zugriff',
  appSince: 'Seit {{at}}',
  appScopes: 'Zugriff: {{scopes}}',
  appRevoke: 'Zugriff entziehen',
  appRevoked: 'Die App hat keinen Zugriff mehr.',

  closeTitle: 'Konto schließen',
  closeText:
    'Damit werden Ihr Konto, Ihre zweiten Faktoren und Ihre Anmeldungen sofort gelöscht. Bestellungen und Zahlungen bleiben in den Geschäftsunterlagen, nicht mehr mit Ihnen verknüpft. Das lässt sich nicht rückgängig machen.',
  closeConfirm: 'Geben Sie zur Bestätigung Ihre E-Mail-Adresse ein',
  closeSubmit: 'Mein Konto schließen',
  closeMismatch: 'Das ist nicht die Adresse dieses Kontos.',
  closed: 'Ihr Konto ist geschlossen. Auf Wiedersehen.',
  closedMailSubject: 'Ihr Konto wurde geschlossen',
  closedMailText:
    'Das Konto {{email}} wurde am {{at}} geschlossen. Seine Anmeldungen sind beendet.\n\nWenn Sie das nicht waren, benachrichtigen Sie jetzt den Administrator.',
};
