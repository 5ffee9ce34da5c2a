import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('orders', (t) => {
    t.text('id').primary();
    // No foreign key: owners are token subjects (users or `client:` ids), and an order
    // outlives the deletion of its user for bookkeeping.
    t.text('user_id').notNullable();
    t.text('customer').notNullable();
    t.text('status').notNullable();
    t.bigInteger('amount').notNullable();
    t.specificType('currency', 'char(3)').notNullable();
    t.jsonb('items');
    t.text('note');
    t.integer('version').notNullable().defaultTo(1);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['user_id', 'created_at']);
    t.index(['created_at']);
  });
  await knex.raw(
    "ALTER TABLE orders ADD CONSTRAINT orders_status_check CHECK (status IN ('pending', 'open', 'fulfilled', 'cancelled'))",
  );
  await knex.raw('ALTER TABLE orders ADD CONSTRAINT orders_amount_check CHECK (amount >= 0)');

  // Server-side secrets the API instances must share (e.g. the cursor HMAC key), so
  // every instance behind a load balancer signs and checks cursors alike.
  await knex.schema.createTable('api_secrets', (t) => {
    t.text('name').primary();
    t.text('value').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('api_secrets');
  await knex.schema.dropTable('orders');
}
