/** One text message. */
export interface SmsMessage {
  to: string;
  text: string;
}

/**
 * Sends SMS. Implementations: file.ts (default: one JSON file per message under DATA_DIR/sms, Contract)
 * and http.ts (a provider's HTTP API, SMS_HTTP_URL).
 */
export interface SmsSender {
  send(message: SmsMessage): Promise<void>;
}
