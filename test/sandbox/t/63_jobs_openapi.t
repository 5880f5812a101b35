# test/openapi/sandbox-jobs.json, the OpenAPI 3 document written by hand
# for the import of declared endpoints, against the sandbox it describes:
# every list route of the six job families is in it and nothing else; each
# answers 200 with the document's security scheme and 401 without it; the
# envelope has the document's required members and exactly one array,
# whose items have exactly the item schema's properties; every documented
# parameter is taken and an undocumented one is refused.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Sandbox;
use Test::More;

my $file = "$FindBin::Bin/../../openapi/sandbox-jobs.json";
open(my $fh, '<', $file) or die "$file: $!";
my $doc = do { local $/; JSON::PP->new->decode(<$fh>) };
close $fh;

my $KEY = 'openapi-key';
my $sb = Sandbox->start(keys => [$KEY], args => ['--seed', '2']);
my $tok = $sb->req('POST', '/oauth/token',
				   body => "grant_type=client_credentials&client_id=client-$KEY&client_secret=$KEY",
				   ctype => 'application/x-www-form-urlencoded')->{json}{access_token};

like($doc->{openapi}, qr/^3\.\d+\.\d+$/, 'an OpenAPI 3 document');
is_deeply([sort keys %{ $doc->{paths} }],
		  [sort map { ("/jobs/$_/models", "/jobs/$_/history") } qw(ocr translate summarize classify extract redact)],
		  'the list routes of the six families, and nothing else');

sub resolve
{
	my ($s) = @_;
	while (ref $s eq 'HASH' && $s->{'$ref'})
	{
		my @p = split m{/}, $s->{'$ref'};
		shift @p;				# '#'
		$s = $doc;
		$s = $s->{$_} for @p;
	}
	return $s;
}

my %schemes = %{ $doc->{components}{securitySchemes} };
is($schemes{clientCredentials}{flows}{clientCredentials}{tokenUrl}, '/oauth/token',
   'the token URL of the client-credentials flow');
is_deeply([@{ $schemes{queryKey} }{qw(in name)}], ['query', 'api_key'], 'the query key');

# GET path with the credentials of the scheme
sub get
{
	my ($scheme, $path, $query) = @_;
	$query //= '';
	if ($scheme eq 'queryKey')
	{
		return $sb->req('GET', $path . '?' . join('&', grep { length } $query, "api_key=$KEY"));
	}
	my $url = $path . (length $query ? "?$query" : '');
	return $sb->req('GET', $url, headers => { Authorization => 'Bearer ' . ($scheme eq 'clientCredentials' ? $tok : $KEY) });
}

for my $path (sort keys %{ $doc->{paths} })
{
	my $op = $doc->{paths}{$path}{get};
	ok($op, "$path: a GET");
	my ($scheme) = keys %{ $op->{security}[0] };
	ok($schemes{$scheme}, "$path: security $scheme");

	my $r = get($scheme, $path);
	is($r->{status}, 200, "$path: 200 with $scheme");
	is($sb->req('GET', $path)->{status}, 401, "$path: 401 without credentials");

	my $schema = resolve($op->{responses}{200}{content}{'application/json'}{schema});
	my ($items, $item_schema);
	if ($schema->{type} eq 'array')
	{
		is(ref $r->{json}, 'ARRAY', "$path: a top-level array");
		($items, $item_schema) = ($r->{json}, resolve($schema->{items}));
		ok($op->{responses}{200}{headers}{Link}, "$path: the Link header is documented");
	}
	else
	{
		my @arrays = grep { (resolve($schema->{properties}{$_})->{type} // '') eq 'array' }
		  keys %{ $schema->{properties} };
		is(scalar @arrays, 1, "$path: one array member ($arrays[0])");
		is_deeply([sort keys %{ $r->{json} }], [sort keys %{ $schema->{properties} }],
				  "$path: the envelope's members are the document's");
		ok(!grep({ !exists $r->{json}{$_} } @{ $schema->{required} || [] }),
		   "$path: the required members are there");
		$items = $r->{json}{ $arrays[0] };
		$item_schema = resolve($schema->{properties}{ $arrays[0] }{items});
	}
	ok(@$items > 0, "$path: items");
	my @props = sort keys %{ $item_schema->{properties} };
	is_deeply([sort keys %{ $items->[0] }], \@props, "$path: the item's members are the schema's");
	my @nulls = grep { !defined $items->[0]{$_} } @props;
	for my $n (@nulls)
	{
		my $p = resolve($item_schema->{properties}{$n});
		ok($p->{nullable}, "$path: $n may be null");
	}

	# every documented parameter is taken, an undocumented one is refused
	for my $p (@{ $op->{parameters} || [] })
	{
		my $v = $p->{schema}{enum} ? $p->{schema}{enum}[0]
		  : ($p->{schema}{type} eq 'integer') ? ($p->{schema}{default} // 1)
		  : undef;
		next unless defined $v;	# cursors: 60_jobs_paging.t
		is(get($scheme, $path, "$p->{name}=$v")->{status}, 200, "$path: parameter $p->{name}");
	}
	is(get($scheme, $path, 'undocumented=1')->{status}, 400, "$path: an undocumented parameter is 400");
}

done_testing();
