/** Row types as the database returns them (snake_case, Dates for timestamptz). */
export interface UserRow {
  id: string;
  email: string;
  name: string | null;
  roles: string[];
  password_hash: string;
  created_at: Date;
  updated_at: Date;
}
