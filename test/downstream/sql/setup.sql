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
  booked_at timestamptz NOT NULL DEFAULT now()
);
CREATE FUNCTION shop.place_order(plate text, custom_id text) RETURNS text
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
            'start_date', '2020-01-01')),
         'user', jsonb_build_object('email', 'ana@example.com')), 'orders');
  INSERT INTO shop.bookings (plate, order_id) VALUES (plate, r -> 'orders' -> 0 ->> 'id');
  RETURN r -> 'orders' -> 0 ->> 'id';
END $$;

-- the sandbox answers
SELECT sandbox.url() = :'sandbox_url' AS helpers_see_the_sandbox;
