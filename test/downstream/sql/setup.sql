-- setup: the project's schema, once per suite.  The sandbox's URL comes
-- from the environment (partner_svc_regress exports PSVC_SANDBOX_URL), so
-- no port appears in the expected output.
\getenv sandbox_url PSVC_SANDBOX_URL
CREATE EXTENSION partner_svc;
CREATE EXTENSION partner_svc_sandbox_helpers;
CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url :'sandbox_url');
CREATE USER MAPPING FOR CURRENT_USER SERVER orders OPTIONS (api_key 'sandbox-key');

-- the project's code under test
CREATE SCHEMA shop;
CREATE TABLE shop.bookings (
  plate text NOT NULL,
  order_id text NOT NULL,
  booked_at timestamptz NOT NULL DEFAULT now(),
  status text                       -- kept up to date by the webhooks
);
-- The partner's webhooks move partner_svc.order_states; the shop follows.
-- The trigger runs in the webhook worker's transaction, whose search_path
-- is pg_catalog, pg_temp: every name in it is qualified.
CREATE FUNCTION shop.follow_order_state() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE shop.bookings SET status = NEW.status WHERE order_id = NEW.unique_id;
  RETURN NULL;
END $$;
CREATE TRIGGER follow_order_state AFTER INSERT OR UPDATE ON partner_svc.order_states
  FOR EACH ROW EXECUTE FUNCTION shop.follow_order_state();
CREATE FUNCTION shop.place_order(plate text, custom_id text,
                                 start_date text DEFAULT '2020-01-01') RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  r jsonb;
BEGIN
  r := partner_svc.create_order(jsonb_build_object(
         'terms_and_privacy_accepted', true,
         'order_has_been_paid', true,
         'vehicles', jsonb_build_array(jsonb_build_object('plate', plate, 'country', 'SI')),
         'vignettes', jsonb_build_array(jsonb_build_object(
            'custom_id', custom_id, 'name', 'SI e-vignette', 'period', '1_year',
            'start_date', start_date)),
         'user', jsonb_build_object('email', 'ana@example.com')), 'orders');
  INSERT INTO shop.bookings (plate, order_id) VALUES (plate, r -> 'orders' -> 0 ->> 'id');
  RETURN r -> 'orders' -> 0 ->> 'id';
END $$;

-- the sandbox answers
SELECT sandbox.url() = :'sandbox_url' AS helpers_see_the_sandbox;
